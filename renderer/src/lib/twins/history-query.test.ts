import { describe, expect, it } from 'vitest';
import { chartNumber, historyQuery, toSeries } from './history-query';

const ID = '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';

describe('historyQuery', () => {
  it('reads raw points up to a day and hourly-or-coarser means beyond', () => {
    expect(historyQuery(ID, '24h')).toBe(
      `SELECT time, value WHERE state.id = '${ID}' AND time >= now() - 24h ORDER BY time LIMIT 5000`,
    );
    expect(historyQuery(ID, '30d')).toBe(
      `SELECT bucket(1h) AS t, mean(value) AS v WHERE state.id = '${ID}' AND time >= now() - 30d GROUP BY t ORDER BY t LIMIT 5000`,
    );
  });

  it('refuses anything but a UUID, so no text reaches the query', () => {
    expect(() => historyQuery("x' OR 1=1", '1h')).toThrow(/not a state id/);
  });
});

describe('toSeries / chartNumber', () => {
  it('keeps numbers, booleans and numeric text; drops NULL buckets and other text', () => {
    expect(chartNumber(true)).toBe(1);
    expect(chartNumber('2.5')).toBe(2.5);
    expect(chartNumber('on')).toBeNull();
    expect(
      toSeries([
        ['2026-01-01T00:00:00.000Z', 1],
        ['2026-01-01T01:00:00.000Z', null],
        ['2026-01-01T02:00:00.000Z', 0],
      ]),
    ).toEqual([
      [Date.parse('2026-01-01T00:00:00.000Z'), 1],
      [Date.parse('2026-01-01T02:00:00.000Z'), 0],
    ]);
  });
});
