import { describe, expect, it } from 'vitest';
import { encodePoints } from './outbox.js';
import { tupleToPoint, type OutboxTuple } from './outbox-reader.js';
import type { TimeSeriesPoint } from './timeseries.types.js';

describe('outbox tuples', () => {
  it('read back exactly what encodePoints wrote (the writer decodes the JSON itself)', () => {
    const points: TimeSeriesPoint[] = [
      {
        accountId: 'a',
        twinId: 't',
        stateId: 's',
        stateKey: 'k',
        time: new Date(1_700_000_000_123),
        value: 1.5,
        text: null,
      },
      { accountId: 'a', twinId: 't', stateId: 's', stateKey: 'k', time: new Date(5), value: null, text: 'x' },
    ];
    const tuples = JSON.parse(encodePoints(points).toString('utf8')) as OutboxTuple[];
    expect(tuples.map(tupleToPoint)).toEqual(points);
  });
});
