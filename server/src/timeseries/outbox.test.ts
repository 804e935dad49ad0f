import { describe, expect, it } from 'vitest';
import { decodePoints, encodePoints } from './outbox.js';
import type { TimeSeriesPoint } from './timeseries.types.js';

describe('outbox encoding', () => {
  it('round-trips numeric, text and null values with millisecond times', () => {
    const points: TimeSeriesPoint[] = [
      {
        accountId: 'a',
        twinId: 't',
        stateId: 's1',
        stateKey: 'flow',
        time: new Date(1_700_000_000_123),
        value: 12.5,
        text: null,
      },
      {
        accountId: 'a',
        twinId: 't',
        stateId: 's2',
        stateKey: 'mode',
        time: new Date(0),
        value: null,
        text: 'auto "x"',
      },
      {
        accountId: 'a',
        twinId: 't',
        stateId: 's3',
        stateKey: 'on',
        time: new Date(86_400_000),
        value: 1,
        text: null,
      },
    ];
    expect(decodePoints(encodePoints(points))).toEqual(points);
  });
});
