import { describe, expect, it } from 'vitest';
import type { CalendarPeriod, TimeAggregateOperation } from '../state-source.js';
import {
  addValue,
  readAccumulator,
  rollTo,
  startAccumulator,
  stateResult,
  type PeriodAccumulator,
} from './time-aggregation.js';

const at = (iso: string) => Date.parse(iso);

/** Feeds values in order and returns the state's result after each, like the engine does. */
function run(
  period: CalendarPeriod,
  operation: TimeAggregateOperation,
  values: Array<[string, unknown]>,
  zone = 'UTC',
): { results: Array<number | null>; acc: PeriodAccumulator } {
  let acc: PeriodAccumulator | null = null;
  const results: Array<number | null> = [];
  for (const [time, value] of values) {
    const t = at(time);
    acc = rollTo(acc ?? startAccumulator(period, t, zone), t, period, operation, zone);
    addValue(acc, value, t);
    results.push(stateResult(acc, operation, period));
  }
  return { results, acc: acc! };
}

const day: Array<[string, unknown]> = [
  ['2026-01-31T08:00:00Z', 4],
  ['2026-01-31T12:00:00Z', 10],
  ['2026-01-31T18:00:00Z', 1],
  ['2026-02-01T06:00:00Z', 7],
];

describe('time-aggregated states over calendar periods', () => {
  it.each([
    ['sum', [4, 14, 15, 7]],
    ['count', [1, 2, 3, 1]],
    ['mean', [4, 7, 5, 7]],
    ['min', [4, 4, 1, 7]],
    ['max', [4, 10, 10, 7]],
  ] as const)('day %s restarts at the month end (UTC midnight)', (operation, expected) => {
    expect(run('day', operation, day).results).toEqual(expected);
  });

  it('difference: the last value of this period minus the last of the previous one', () => {
    const meter: Array<[string, unknown]> = [
      ['2026-02-28T10:00:00Z', 100],
      ['2026-02-28T20:00:00Z', 130],
      ['2026-03-01T09:00:00Z', 150],
      ['2026-03-01T22:00:00Z', 175],
    ];
    // No earlier period on the first day: nothing to subtract.
    expect(run('day', 'difference', meter).results).toEqual([null, null, 20, 45]);
    expect(run('previous-day', 'difference', meter).results).toEqual([null, null, null, null]);
    const later = run('previous-day', 'difference', [...meter, ['2026-03-02T01:00:00Z', 180]]);
    expect(later.results.at(-1)).toBe(45);
  });

  it('previous-day shows the last complete day; before one completed, count is 0 (never null)', () => {
    expect(run('previous-day', 'sum', day).results).toEqual([null, null, null, 15]);
    expect(run('previous-day', 'count', day).results).toEqual([0, 0, 0, 3]);
  });

  it('an empty period counts 0 and sums 0; mean, min, max are null; skipped periods are empty', () => {
    const { acc } = run('day', 'count', day);
    const twoDaysLater = rollTo(acc, at('2026-02-03T10:00:00Z'), 'day', 'count', 'UTC');
    expect(stateResult(twoDaysLater, 'count', 'day')).toBe(0);
    // 2 February had no value: the last complete period is empty.
    expect(twoDaysLater.previous).toBe(0);
    expect(twoDaysLater.carry).toBe(7);
    for (const operation of ['mean', 'min', 'max', 'difference'] as const)
      expect(
        stateResult(rollTo(acc, at('2026-02-02T00:00:00Z'), 'day', operation, 'UTC'), operation, 'day'),
      ).toBe(null);
    expect(stateResult(rollTo(acc, at('2026-02-02T00:00:00Z'), 'day', 'sum', 'UTC'), 'sum', 'day')).toBe(0);
  });

  it('the leap day is a day of its own, and February 2028 sums up to it', () => {
    const values: Array<[string, unknown]> = [
      ['2028-02-28T12:00:00Z', 1],
      ['2028-02-29T00:00:00Z', 2],
      ['2028-02-29T23:59:59Z', 3],
      ['2028-03-01T00:00:00Z', 4],
    ];
    expect(run('day', 'sum', values).results).toEqual([1, 2, 5, 4]);
    expect(run('month', 'sum', values).results).toEqual([1, 3, 6, 4]);
    expect(run('previous-month', 'sum', values).results.at(-1)).toBe(6);
  });

  it('Europe/Berlin: days follow local midnight across both DST changes of 2026', () => {
    const zone = 'Europe/Berlin';
    const spring: Array<[string, unknown]> = [
      ['2026-03-28T22:59:00Z', 1], // 23:59 CET on the 28th
      ['2026-03-28T23:00:00Z', 2], // 00:00 CET on the 29th
      ['2026-03-29T21:59:00Z', 3], // 23:59 CEST on the 29th (a 23-hour day)
      ['2026-03-29T22:00:00Z', 4], // 00:00 CEST on the 30th
    ];
    expect(run('day', 'count', spring, zone).results).toEqual([1, 1, 2, 1]);
    const autumn: Array<[string, unknown]> = [
      ['2026-10-24T22:00:00Z', 1], // 00:00 CEST on the 25th
      ['2026-10-25T22:59:00Z', 2], // 23:59 CET on the 25th (a 25-hour day)
      ['2026-10-25T23:00:00Z', 3], // 00:00 CET on the 26th
    ];
    expect(run('day', 'sum', autumn, zone).results).toEqual([1, 3, 3]);
    expect(run('previous-day', 'sum', autumn, zone).results).toEqual([null, null, 3]);
  });

  it('weeks begin on Monday; years at local new year', () => {
    const values: Array<[string, unknown]> = [
      ['2026-03-29T10:00:00Z', 5], // Sunday
      ['2026-03-30T00:00:00Z', 6], // Monday
    ];
    expect(run('week', 'sum', values).results).toEqual([5, 6]);
    expect(run('previous-week', 'sum', values).results).toEqual([null, 5]);
    const years: Array<[string, unknown]> = [
      ['2026-12-31T22:30:00Z', 1],
      ['2026-12-31T23:30:00Z', 2], // already 2027 in Berlin
    ];
    expect(run('year', 'sum', years, 'Europe/Berlin').results).toEqual([1, 2]);
    expect(run('year', 'sum', years, 'UTC').results).toEqual([1, 3]);
  });

  it('minute and hour periods', () => {
    const values: Array<[string, unknown]> = [
      ['2026-05-01T10:00:59Z', 1],
      ['2026-05-01T10:01:00Z', 1],
      ['2026-05-01T10:59:59Z', 1],
    ];
    expect(run('minute', 'count', values).results).toEqual([1, 1, 1]);
    expect(run('hour', 'count', values).results).toEqual([1, 2, 3]);
  });

  it('counts non-numbers, adds booleans as 1/0, and ignores values older than the period', () => {
    const acc = startAccumulator('day', at('2026-05-01T10:00:00Z'), 'UTC');
    addValue(acc, 'text', at('2026-05-01T10:00:00Z'));
    addValue(acc, true, at('2026-05-01T11:00:00Z'));
    expect(addValue(acc, 5, at('2026-04-30T23:00:00Z'))).toBe(false);
    expect([acc.count, acc.sum, stateResult(acc, 'mean', 'day')]).toEqual([2, 1, 1]);
  });

  it('reads back only well-formed accumulators', () => {
    const acc = startAccumulator('day', at('2026-05-01T10:00:00Z'), 'UTC');
    expect(readAccumulator(JSON.parse(JSON.stringify(acc)))).toEqual(acc);
    expect(readAccumulator({})).toBeNull();
    expect(readAccumulator({ ...acc, min: 'x' })).toBeNull();
    expect(readAccumulator(null)).toBeNull();
  });
});
