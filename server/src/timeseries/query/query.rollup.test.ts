import { describe, expect, it } from 'vitest';
import { planQuery } from './query.analyze.js';
import { compilePostgresSql } from './query.compile-rollup.js';
import { rollupWindow, wholeHourSpan } from './query.rollup.js';

const NOW = new Date('2026-11-27T12:00:00Z');
const window = (text: string) => {
  const found = rollupWindow(planQuery(text, NOW));
  return found && { from: new Date(found.from).toISOString(), to: new Date(found.to).toISOString() };
};
const RANGE = "time >= '2026-01-01T00:20:00Z' AND time < '2026-03-01T10:30:00Z'";

describe('rollup planner', () => {
  it('reads the whole hours inside the time bounds from rollups for rolled-up aggregates', () => {
    expect(
      window(
        `SELECT bucket(1d) AS d, mean(value), min(value), max(value), sum(value), count(*), count(value), first(value), last(value) WHERE state.key = 'p' AND ${RANGE} GROUP BY d`,
      ),
    ).toEqual({ from: '2026-01-01T01:00:00.000Z', to: '2026-03-01T10:00:00.000Z' });
    // An exclusive bound on an hour leaves that hour to the points; <= ends whole hours at the bound's hour.
    expect(
      window(
        "SELECT bucket(6h, 'Europe/Berlin') AS b, mean(value) WHERE time > '2026-01-01T02:00:00Z' AND time <= '2026-01-02T00:00:00Z' GROUP BY b",
      ),
    ).toEqual({ from: '2026-01-01T03:00:00.000Z', to: '2026-01-02T00:00:00.000Z' });
    expect(window(`SELECT state.key AS k, count(*) WHERE ${RANGE} GROUP BY k`)).not.toBeNull();
  });

  it.each([
    ['a raw query', `SELECT time, value WHERE ${RANGE}`],
    ['a text aggregate', `SELECT bucket(1h) AS b, last(text) WHERE ${RANGE} GROUP BY b`],
    ['count of texts', `SELECT bucket(1h) AS b, count(text) WHERE ${RANGE} GROUP BY b`],
    ['sub-hour buckets', `SELECT bucket(30m) AS b, mean(value) WHERE ${RANGE} GROUP BY b`],
    ['a value condition', `SELECT bucket(1h) AS b, mean(value) WHERE value > 3 AND ${RANGE} GROUP BY b`],
    [
      'time in an OR',
      `SELECT bucket(1h) AS b, mean(value) WHERE time < '2026-01-01T00:00:00Z' OR state.key = 'x' GROUP BY b`,
    ],
    ['grouping by value', `SELECT value, count(*) WHERE ${RANGE} GROUP BY value`],
    ['a half-hour zone', `SELECT bucket(1d, 'Asia/Kolkata') AS b, mean(value) WHERE ${RANGE} GROUP BY b`],
    [
      'less than an hour in range',
      "SELECT count(*) WHERE time >= '2026-01-01T00:10:00Z' AND time < '2026-01-01T01:10:00Z'",
    ],
  ])('runs on points alone for %s', (_name, text) => {
    expect(window(text)).toBeNull();
  });

  it('checks zones for whole-hour offsets from 1900: earlier points are read as points', () => {
    expect(wholeHourSpan('Europe/Berlin').from).toBe(Date.UTC(1900, 0, 1));
    expect(wholeHourSpan('Asia/Kolkata').from).toBeGreaterThan(Date.UTC(2099, 0, 1));
    expect(
      window(
        "SELECT bucket(1d, 'Europe/Berlin') AS b, count(*) WHERE time >= '1880-01-01T00:00:00Z' GROUP BY b",
      ),
    ).toEqual({ from: '1900-01-01T00:00:00.000Z', to: '2100-01-01T00:00:00.000Z' });
  });
});

describe('rollup statement', () => {
  const tenancy = { accountId: '0190c9a0-0000-7000-8000-000000000001', includeSubAccounts: true };
  const compiled = compilePostgresSql(
    planQuery(
      `SELECT twin.title AS t, bucket(1d, 'Europe/Berlin') AS d, mean(value), last(value) WHERE twin.tags CONTAINS 'pump' AND ${RANGE} GROUP BY t, d ORDER BY d DESC`,
      NOW,
    ),
    tenancy,
  );

  it('binds one value per placeholder, the window bounds where they stand in the text', () => {
    expect(compiled.sql.split('?').length - 1).toBe(compiled.params.length);
    const dates = compiled.params.filter((p) => p instanceof Date).map((d) => d.toISOString());
    // Before-branch bound, after-branch bounds, marked-hours bounds, rollup-hours bounds; the time
    // filter's own bounds in between.
    expect(dates.filter((d) => d === '2026-01-01T01:00:00.000Z')).toHaveLength(4);
    expect(dates.filter((d) => d === '2026-03-01T10:00:00.000Z')).toHaveLength(3);
  });

  it('reads rollups only below the fold watermark and for hours without a late-point mark', () => {
    expect(compiled.sql).toContain('wm AS (SELECT folded_before AS b FROM ts_rollup_fold)');
    expect(compiled.sql).toContain('r.hour < least(?::timestamptz, (SELECT b FROM wm))');
    expect(compiled.sql).toContain(
      'NOT EXISTS (SELECT 1 FROM ts_rollup_dirty d WHERE d.state_id = r.state_id AND d.hour = r.hour)',
    );
    expect(compiled.sql).toContain('FROM ts_rollup_dirty d JOIN ts_points p ON p.state_id = d.state_id');
  });
});
