import { describe, expect, it } from 'vitest';
import { bestGateway, metaStates } from './packet-meta.js';

describe('packet metadata as states', () => {
  it('names the best gateway by RSSI, then SNR, and keeps every reception', () => {
    const gateways = [
      { gatewayId: 'gw-far', rssi: -118, snr: -7 },
      { gatewayEui: 'a84041ffff1e2b3c', rssi: -92, snr: 4 },
      { gatewayId: 'gw-same-rssi', rssi: -92, snr: 9.5 },
    ];
    expect(bestGateway(gateways)?.gatewayId).toBe('gw-same-rssi');
    const states = metaStates({ fPort: 2, fCnt: 17, gateways, frequency: 868_100_000 });
    expect(states).toEqual({
      '_meta.event': 'uplink',
      '_meta.fPort': 2,
      '_meta.fCnt': 17,
      '_meta.rssi': -92,
      '_meta.snr': 9.5,
      '_meta.gateway': 'gw-same-rssi',
      '_meta.gatewayCount': 3,
      '_meta.gateways': gateways,
      '_meta.frequency': 868_100_000,
    });
  });

  it('names the event of network-server messages and leaves out what the network server did not report', () => {
    expect(metaStates({ event: 'join', devAddr: '260b1234' })).toEqual({
      '_meta.event': 'join',
      '_meta.devAddr': '260b1234',
    });
    expect(metaStates({ topic: 'plant/meter-7/up' })).toEqual({
      '_meta.topic': 'plant/meter-7/up',
    });
    expect(metaStates(undefined)).toEqual({});
  });

  it("makes a field protocol's own metadata states, without overriding the named ones", () => {
    expect(metaStates({ topic: 'a/b', fields: { ioa: 4001, quality: 'IV', topic: 'spoofed' } })).toEqual({
      '_meta.topic': 'a/b',
      '_meta.ioa': 4001,
      '_meta.quality': 'IV',
    });
  });
});
