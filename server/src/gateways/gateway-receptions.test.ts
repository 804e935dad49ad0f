import { describe, expect, it } from 'vitest';
import { metaStates } from '../ingest/packet-meta.js';
import { receptionsOf } from './gateway-receptions.js';
import { UnknownGateways } from './unknown-gateways.js';

describe('gateway receptions', () => {
  it('reads every reception from the _meta.gateways state and ignores what is not one', () => {
    const gateways = [
      { gatewayId: 'gtw1', gatewayEui: '9c5c8e00001a05c4', rssi: -35, snr: 5 },
      { gatewayEui: '0016c001f153a14c', rssi: -110 },
    ];
    expect(receptionsOf(metaStates({ gateways }))).toEqual(gateways);
    expect(receptionsOf({ '_meta.gateways': 'gtw1' })).toEqual([]);
    expect(receptionsOf({ '_meta.gateways': [null, 3, { gatewayId: 'a' }] })).toEqual([{ gatewayId: 'a' }]);
  });

  it('keeps unknown gateways per account, bounded, newest first, dropping registered ones', () => {
    const unknown = new UnknownGateways();
    for (let i = 0; i < 205; i++) unknown.heard('a', `eui${i}`, null, i, 1);
    unknown.heard('a', 'eui204', null, 500, 2);
    const list = unknown.list('a', (g) => g.eui === 'eui203');
    expect(list).toHaveLength(199);
    expect(list[0]).toMatchObject({ eui: 'eui204', uplinks: 3 });
    expect(list.some((g) => g.eui === 'eui0')).toBe(false);
    expect(unknown.list('b', () => false)).toEqual([]);
  });
});
