import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CalendarPeriod, TimeAggregateOperation } from '../../server/src/states/state-source.js';
import { sql } from './support/ingest-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { insertState, insertTwin, storedPoints, pointsByKey, stateRows } from './support/twin-fixtures.js';

/**
 * The state engine's time-driven parts against the database: time-aggregated states across calendar
 * edges in the account's time zone (values set with explicit times, periods rolled over by the timers'
 * `runDue` with explicit clocks), random values and time-series window aggregates.
 */

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
  await sql(t, 'UPDATE accounts SET time_zone = ? WHERE id = ?', ['Europe/Berlin', t.rootAccountId]);
});
afterAll(async () => {
  await t?.close();
});

type Aggregates = Record<string, [TimeAggregateOperation, CalendarPeriod]>;

/** A twin with a plain `source` state and time-aggregated states over it. */
async function scenario(aggregates: Aggregates) {
  const twinId = await insertTwin(t, { title: 'Calendar' });
  const source = await insertState(t, twinId, 'source', null);
  for (const [key, [operation, period]] of Object.entries(aggregates))
    await insertState(t, twinId, key, { type: 'time-aggregated', stateId: source, operation, period });
  t.services.stateEngine.definitionsChanged(twinId);
  const set = (value: number, iso: string) => t.services.stateEngine.setValue(source, value, new Date(iso));
  const values = async () => {
    const rows = await stateRows(t, twinId);
    return Object.fromEntries(Object.keys(aggregates).map((k) => [k, rows[k]!.value]));
  };
  const stamp = async (key: string) => (await stateRows(t, twinId))[key]!.timestamp?.toISOString();
  return { twinId, set, values, stamp };
}

const tick = (iso: string) => t.services.stateTimers.runDue(new Date(iso));

describe('time-aggregated states across calendar edges (Europe/Berlin)', () => {
  it('spring forward: 2026-03-29 is a 23-hour day from local midnight to local midnight', async () => {
    const s = await scenario({
      daySum: ['sum', 'day'],
      dayCount: ['count', 'day'],
      lastDay: ['sum', 'previous-day'],
    });
    await s.set(1, '2026-03-28T22:30:00Z'); // 23:30 CET on the 28th
    await s.set(2, '2026-03-28T23:30:00Z'); // 00:30 CET on the 29th
    await s.set(3, '2026-03-29T21:30:00Z'); // 23:30 CEST on the 29th
    expect(await s.values()).toEqual({ daySum: 5, dayCount: 2, lastDay: 1 });
    await tick('2026-03-29T21:59:59Z');
    expect(await s.values()).toEqual({ daySum: 5, dayCount: 2, lastDay: 1 });
    await tick('2026-03-29T22:00:30Z'); // 00:00:30 CEST on the 30th
    expect(await s.values()).toEqual({ daySum: 0, dayCount: 0, lastDay: 5 });
    expect(await s.stamp('dayCount')).toBe('2026-03-29T22:00:00.000Z');
  });

  it('fall back: 2026-10-25 is a 25-hour day; the week runs Monday to Monday', async () => {
    const s = await scenario({
      daySum: ['sum', 'day'],
      weekSum: ['sum', 'week'],
      lastWeek: ['count', 'previous-week'],
    });
    await s.set(1, '2026-10-24T22:00:00Z'); // 00:00 CEST on Sunday the 25th
    await s.set(2, '2026-10-25T00:30:00Z'); // 02:30 CEST
    await s.set(4, '2026-10-25T01:30:00Z'); // 02:30 CET, the repeated hour
    await s.set(8, '2026-10-25T22:59:00Z'); // 23:59 CET
    expect(await s.values()).toEqual({ daySum: 15, weekSum: 15, lastWeek: 0 });
    await s.set(16, '2026-10-25T23:00:00Z'); // 00:00 CET on Monday the 26th
    expect(await s.values()).toEqual({ daySum: 16, weekSum: 16, lastWeek: 4 });
  });

  it('month ends, the leap day 2028-02-29 and a year end; difference to the last period', async () => {
    const s = await scenario({
      monthSum: ['sum', 'month'],
      lastMonth: ['sum', 'previous-month'],
      monthDiff: ['difference', 'month'],
      yearCount: ['count', 'year'],
    });
    await s.set(100, '2028-01-31T22:30:00Z'); // 23:30 on 31 January
    await s.set(110, '2028-02-29T22:30:00Z'); // 23:30 on the leap day
    expect(await s.values()).toEqual({ monthSum: 110, lastMonth: 100, monthDiff: 10, yearCount: 2 });
    await s.set(125, '2028-02-29T23:30:00Z'); // 00:30 on 1 March
    expect(await s.values()).toEqual({ monthSum: 125, lastMonth: 110, monthDiff: 15, yearCount: 3 });
    // May begins; April had no value: this month and the previous one sum 0.
    await tick('2028-05-01T00:00:00Z');
    expect(await s.values()).toEqual({ monthSum: 0, lastMonth: 0, monthDiff: null, yearCount: 3 });
    await s.set(126, '2028-12-31T23:30:00Z'); // 00:30 on 1 January 2029
    expect(await s.values()).toEqual({ monthSum: 126, lastMonth: 0, monthDiff: 1, yearCount: 1 });
  });
});

describe('state engine: timers for random and time-series aggregate sources', () => {
  it('draws random values every interval and recomputes window aggregates from ts_points', async () => {
    const twinId = await insertTwin(t, { title: 'Timers' });
    const source = await insertState(t, twinId, 'source', null);
    await insertState(t, twinId, 'random', {
      type: 'random',
      min: 10,
      max: 20,
      intervalSeconds: 60,
      decimals: 6,
    });
    await insertState(t, twinId, 'windowMean', {
      type: 'timeseries-aggregate',
      stateId: source,
      operation: 'mean',
      windowSeconds: 60,
      intervalSeconds: 30,
    });
    await insertState(t, twinId, 'windowCount', {
      type: 'timeseries-aggregate',
      stateId: source,
      operation: 'count',
      windowSeconds: 60,
      intervalSeconds: 30,
    });
    t.services.stateEngine.definitionsChanged(twinId);
    const now = Date.now() + 3_600_000;
    for (const [ago, value] of [
      [50, 1],
      [10, 2],
      [600, 50],
    ] as const)
      await sql(t, 'INSERT INTO ts_points (state_id, time, value) VALUES (?, ?, ?)', [
        source,
        new Date(now - ago * 1000),
        value,
      ]);
    await t.services.stateTimers.runDue(new Date(now));
    let rows = await stateRows(t, twinId);
    const drawn = rows.random!.value as number;
    expect(drawn).toBeGreaterThanOrEqual(10);
    expect(drawn).toBeLessThanOrEqual(20);
    expect([rows.windowMean!.value, rows.windowCount!.value]).toEqual([1.5, 2]);
    // Not due yet after 20 s; due after 31 s (windows) and 61 s (random).
    await sql(t, 'INSERT INTO ts_points (state_id, time, value) VALUES (?, ?, ?)', [
      source,
      new Date(now + 5000),
      6,
    ]);
    await t.services.stateTimers.runDue(new Date(now + 20_000));
    rows = await stateRows(t, twinId);
    expect([rows.random!.value, rows.windowCount!.value]).toEqual([drawn, 2]);
    await t.services.stateTimers.runDue(new Date(now + 31_000));
    rows = await stateRows(t, twinId);
    // Window [now − 29 s, now + 31 s): the points of 10 s ago and 5 s ahead.
    expect([rows.random!.value, rows.windowMean!.value, rows.windowCount!.value]).toEqual([drawn, 4, 2]);
    await t.services.stateTimers.runDue(new Date(now + 61_000));
    expect((await stateRows(t, twinId)).random!.value).not.toBe(drawn);
    // Windows due again at +61 s: [now + 1 s, now + 61 s) holds only the point 5 s ahead.
    expect(pointsByKey(await storedPoints(t), twinId)).toMatchObject({
      windowMean: [1.5, 4, 6],
      windowCount: [2, 1],
    });
  });
});
