import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planQuery } from '../../server/src/timeseries/query/query.analyze.js';
import { compilePostgresSql } from '../../server/src/timeseries/query/query.compile-rollup.js';
import {
  compileSql,
  type CompiledSql,
  type Tenancy,
} from '../../server/src/timeseries/query/query.compile-sql.js';
import { rollupWindow } from '../../server/src/timeseries/query/query.rollup.js';
import { TimeSeriesSqlReader } from '../../server/src/timeseries/query/query.sql-reader.js';
import { PartitionMaintenance } from '../../server/src/timeseries/partitions.js';
import { RetentionJob } from '../../server/src/timeseries/retention.js';
import { foldRollups } from '../../server/src/timeseries/rollup-fold.js';
import { copyPoints } from '../../server/src/timeseries/targets/points-copy.js';
import { insertPoints } from '../../server/src/timeseries/targets/postgres.target.js';
import type { TimeSeriesPoint } from '../../server/src/timeseries/timeseries.types.js';
import { bearer, caller, login } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { TimeSeriesFixtures, type PointRowInput } from './support/timeseries-fixtures.js';

/**
 * Hourly rollups against the points they stand for: every bucket of random hour-aligned queries
 * (UTC and Europe/Berlin across its 25-hour day, 2026-10-25) compared with the same query on points
 * alone, with hours folded by the background fold, late points marked by the write path before and
 * after their re-fold, hours past the watermark, retention and partition cuts, and a state deletion.
 * The fold runs explicitly with a given clock; the write path's clock is passed the same way.
 *
 * Exact comparison of floating sums: every value is an integer of at most 500 in magnitude and no
 * bucket holds 2^40 of them, so every partial and total sum is an exactly representable integer
 * whatever the summation order; mean is that sum over the count in both statements.
 */

const HOUR = 3_600_000;
const START = Date.parse('2026-10-22T00:00:00Z');
const END = Date.parse('2026-10-29T00:00:00Z');
let t: TestApp;
let pool: pg.Pool;
let reader: TimeSeriesSqlReader;
let fx: TimeSeriesFixtures;
let tenancy: Tenancy;

/** Deterministic pseudo-random numbers (a fixed LCG), so a failure repeats. */
let seed = 20261127;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};
const int = (from: number, to: number) => from + Math.floor(random() * (to - from + 1));

function randomPoints(count: number, from: number, to: number): PointRowInput[] {
  return Array.from({ length: count }, () => {
    const time = from + Math.floor(random() * (to - from));
    // Some points carry text only; some share a time (ties for first and last).
    return random() < 0.05
      ? { time, text: 'note' }
      : { time: random() < 0.03 ? time - (time % HOUR) : time, value: int(-500, 500) };
  });
}

const execute = async (statement: CompiledSql) =>
  t.orm.em
    .fork()
    .getConnection()
    .execute<Array<Record<string, unknown>>>(statement.sql, statement.params, 'all');

/**
 * The query through the rollups (it must use them) and on points alone: identical rows. The rollup
 * statement also runs on the query endpoint's reader, where a statement naming states by id is
 * prepared once and its cached generic plan serves every other window and state.
 */
async function expectSameAsPoints(text: string): Promise<number> {
  const plan = planQuery(text, new Date(END));
  expect(rollupWindow(plan), text).not.toBeNull();
  const viaRollups = compilePostgresSql(plan, tenancy);
  const [rows, viaReader, viaPoints] = await Promise.all([
    execute(viaRollups),
    reader.select(viaRollups),
    execute(compileSql(plan, tenancy)),
  ]);
  expect(rows, text).toEqual(viaPoints);
  expect(viaReader, text).toEqual(viaPoints);
  return viaPoints.length;
}

const iso = (ms: number) => new Date(ms).toISOString();

function randomQuery(filter: string): string {
  const width = ['1h', '2h', '6h', '1d'][int(0, 3)]!;
  const zone = random() < 0.5 ? ", 'Europe/Berlin'" : '';
  const from = int(START - 6 * HOUR, END);
  // At least two hours, so a whole hour always lies inside.
  const to = int(from + 2 * HOUR, END + 6 * HOUR);
  const [lower, upper] = [random() < 0.5 ? '>=' : '>', random() < 0.5 ? '<' : '<='];
  const byState = random() < 0.3 ? 'state.key AS key, ' : '';
  return (
    `SELECT ${byState}bucket(${width}${zone}) AS b, count(*), count(value), mean(value), min(value), max(value), ` +
    `sum(value), first(value), last(value) WHERE ${filter} AND time ${lower} '${iso(from)}' AND time ${upper} '${iso(to)}' ` +
    `GROUP BY ${byState ? 'key, ' : ''}b`
  );
}

/** Rollup rows that differ from a fresh fold of the points (missing, extra or other values). */
async function rollupsDifferingFromPoints(): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(`
    WITH f AS (
      SELECT state_id, date_trunc('hour', "time", 'UTC') AS hour, count(*) AS n_rows, count(value) AS n_values,
             sum(value) AS v_sum, min(value) AS v_min, max(value) AS v_max,
             min("time") FILTER (WHERE value IS NOT NULL) AS first_time,
             (array_agg(value ORDER BY "time", value) FILTER (WHERE value IS NOT NULL))[1] AS first_value,
             max("time") FILTER (WHERE value IS NOT NULL) AS last_time,
             (array_agg(value ORDER BY "time" DESC, value DESC) FILTER (WHERE value IS NOT NULL))[1] AS last_value
        FROM ts_points GROUP BY 1, 2)
    SELECT count(*) AS n FROM f FULL JOIN ts_rollup_hourly r USING (state_id, hour) AS j
     WHERE j.hour < (SELECT folded_before FROM ts_rollup_fold)
       AND NOT EXISTS (SELECT 1 FROM ts_rollup_dirty d WHERE d.state_id = j.state_id AND d.hour = j.hour)
       AND (f.n_rows, f.n_values, f.v_sum, f.v_min, f.v_max, f.first_time, f.first_value, f.last_time, f.last_value)
           IS DISTINCT FROM
           (r.n_rows, r.n_values, r.v_sum, r.v_min, r.v_max, r.first_time, r.first_value, r.last_time, r.last_value)`);
  return Number(rows[0]!.n);
}

const count = async (sql: string) => Number((await pool.query<{ n: string }>(sql)).rows[0]!.n);
const marks = () => count('SELECT count(*) AS n FROM ts_rollup_dirty');
const foldedBefore = async () =>
  (await pool.query<{ b: Date }>('SELECT folded_before AS b FROM ts_rollup_fold')).rows[0]!.b.getTime();

function asPoints(stateId: string, rows: PointRowInput[]): TimeSeriesPoint[] {
  return rows.map((r) => ({
    accountId: t.rootAccountId,
    twinId: fx.ids.Meter!,
    stateId,
    stateKey: 'k',
    time: new Date(r.time),
    value: r.value ?? null,
    text: r.text ?? null,
  }));
}

/** The state engine's COPY in a transaction, as at `now` on the writer's clock. */
async function copyInTransaction(stateId: string, rows: PointRowInput[], now: number): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await copyPoints(client, asPoints(stateId, rows), now);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
}

beforeAll(async () => {
  t = await createTestApp();
  pool = new pg.Pool({ connectionString: String(t.orm.config.get('clientUrl')), max: 2 });
  reader = new TimeSeriesSqlReader({ databaseUrl: String(t.orm.config.get('clientUrl')), connections: 1 });
  fx = new TimeSeriesFixtures(pool);
  tenancy = { accountId: t.rootAccountId, includeSubAccounts: false };
  const meter = await fx.twin('Meter', t.rootAccountId, null);
  await fx.state('energy', t.rootAccountId, meter, 'energy');
  await fx.state('power', t.rootAccountId, meter, 'power');
  // Ingest in time order from START: nothing is late, and the fold has folded nothing yet.
  await pool.query('UPDATE ts_rollup_fold SET folded_before = $1', [new Date(START)]);
  for (let batch = 0; batch < 4; batch++) {
    await copyInTransaction(fx.ids.energy!, randomPoints(600, START, END), START);
    await copyInTransaction(fx.ids.power!, randomPoints(200, START, END), START);
  }
});

afterAll(async () => {
  await reader?.close();
  await pool?.end();
  await t?.close();
});

describe('hourly rollups', () => {
  it('are folded by the job up to two hours before its clock, off the write path', async () => {
    expect(await marks()).toBe(0);
    expect(await count('SELECT count(*) AS n FROM ts_rollup_hourly')).toBe(0);
    // Half-way, then to the end, a day per transaction: the watermark stops two hours before the clock.
    const half = await foldRollups(pool, new Date(START + 80 * HOUR + 59 * 60_000), { maxHours: 24 });
    expect(half).toMatchObject({ hours: 78, marks: 0 });
    expect(await rollupsDifferingFromPoints()).toBe(0);
    await expectSameAsPoints(randomQuery(`twin.id = '${fx.ids.Meter}'`));
    await foldRollups(pool, new Date(END + 3 * HOUR), { maxHours: 24 });
    expect(await foldedBefore()).toBe(END + HOUR);
    expect(await count('SELECT count(DISTINCT hour) AS n FROM ts_rollup_hourly')).toBe((END - START) / HOUR);
    expect(await rollupsDifferingFromPoints()).toBe(0);
  });

  it('answer random hour-aligned queries exactly as the points do, across a 25-hour day', async () => {
    let rows = 0;
    for (let i = 0; i < 40; i++) rows += await expectSameAsPoints(randomQuery(`twin.id = '${fx.ids.Meter}'`));
    expect(rows).toBeGreaterThan(200);
    // Named by id: the reader's cached generic plans, over other windows and states each time.
    const states = [`'${fx.ids.energy}'`, `'${fx.ids.power}'`];
    for (let i = 0; i < 40; i++) {
      const filter = i % 3 === 2 ? `state.id IN (${states.join(', ')})` : `state.id = ${states[i % 2]}`;
      rows += await expectSameAsPoints(randomQuery(filter));
    }
    const { rows: prepared } = await reader.pools.generic.query<{ n: string; generic: string }>(
      'SELECT count(*) AS n, coalesce(sum(generic_plans), 0) AS generic FROM pg_prepared_statements',
    );
    expect(Number(prepared[0]!.n)).toBeGreaterThan(0);
    expect(Number(prepared[0]!.generic)).toBeGreaterThan(Number(prepared[0]!.n));
  });

  it('read hours with late points from the points until the job folds them again', async () => {
    const late = randomPoints(300, START, END);
    // A late point that becomes an hour's new first and last value, and one tied with it on time.
    late.push({ time: START + 5 * HOUR, value: -1000 }, { time: START + 5 * HOUR, value: -999 });
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await insertPoints(client, asPoints(fx.ids.energy!, late), 100, END + 3 * HOUR);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    const marked = await marks();
    expect(marked).toBeGreaterThan(50);
    // The folded rows of those hours are stale now; queries must not read them.
    const stale =
      await count(`SELECT count(*) AS n FROM ts_rollup_hourly r JOIN ts_rollup_dirty d USING (state_id, hour)
       WHERE r.n_rows <> (SELECT count(*) FROM ts_points p WHERE p.state_id = r.state_id
                             AND p.time >= r.hour AND p.time < r.hour + interval '1 hour')`);
    expect(stale).toBe(marked);
    for (let i = 0; i < 20; i++) await expectSameAsPoints(randomQuery(`state.id = '${fx.ids.energy}'`));
    expect(await foldRollups(pool, new Date(END + 3 * HOUR))).toMatchObject({ hours: 0, marks: marked });
    expect(await marks()).toBe(0);
    expect(await rollupsDifferingFromPoints()).toBe(0);
    for (let i = 0; i < 10; i++) await expectSameAsPoints(randomQuery(`twin.id = '${fx.ids.Meter}'`));
  });

  it("re-fold a marked hour after a writer holding its mark commits, with that writer's point", async () => {
    const hour = START + 30 * HOUR;
    await fx.points(fx.ids.energy!, [{ time: hour + 60_000, value: 1 }]);
    const writer = await pool.connect();
    try {
      await writer.query('BEGIN');
      // Marks the same hour again: the upsert holds the mark's row lock until the commit.
      await copyPoints(writer, asPoints(fx.ids.energy!, [{ time: hour + 120_000, value: 2 }]));
      const fold = foldRollups(pool, new Date(END + 3 * HOUR));
      await new Promise((resolve) => setTimeout(resolve, 300));
      await writer.query('COMMIT');
      expect((await fold).marks).toBe(1);
    } finally {
      writer.release();
    }
    expect(await marks()).toBe(0);
    expect(await rollupsDifferingFromPoints()).toBe(0);
  });

  it('read the hours past the watermark from the points; a point less than an hour old marks nothing', async () => {
    // A point at END + 1:30, written 59 minutes later: not late, and its hour is past the watermark.
    await copyInTransaction(fx.ids.energy!, [{ time: END + 90 * 60_000, value: 7 }], END + 149 * 60_000);
    expect(await marks()).toBe(0);
    const text = `SELECT bucket(1h) AS b, count(*), sum(value) WHERE state.id = '${fx.ids.energy}' AND time >= '${iso(END - 2 * HOUR)}' GROUP BY b`;
    expect(await expectSameAsPoints(text)).toBe(3);
    await foldRollups(pool, new Date(END + 3 * HOUR + 59 * 60_000));
    expect(await foldedBefore()).toBe(END + HOUR);
    await foldRollups(pool, new Date(END + 4 * HOUR));
    expect(await foldedBefore()).toBe(END + 2 * HOUR);
    expect(await count(`SELECT n_rows AS n FROM ts_rollup_hourly WHERE hour = '${iso(END + HOUR)}'`)).toBe(1);
    expect(await rollupsDifferingFromPoints()).toBe(0);
    await expectSameAsPoints(text);
  });

  it('are cut with the points by partition maintenance and retention, at whole hours', async () => {
    const common = { pool, log: t.app.log };
    const oldest = async () =>
      Number((await pool.query<{ m: Date }>('SELECT min("time") AS m FROM ts_points')).rows[0]!.m);
    // August and September land in the default partition; maintenance with a cutoff of 26 September
    // 08:00 deletes August there and moves September into a new partition (not counted twice).
    await fx.points(fx.ids.energy!, randomPoints(300, Date.parse('2026-08-20T00:00:00Z'), START));
    expect(await marks()).toBeGreaterThan(0);
    await foldRollups(pool, new Date(END + 3 * HOUR));
    expect(await rollupsDifferingFromPoints()).toBe(0);
    await pool.query('UPDATE accounts SET retention_months = 2');
    const partitions = new PartitionMaintenance({ ...common, clock: () => new Date('2026-11-26T08:20:00Z') });
    expect((await partitions.run())?.created).toContain('ts_points_p2026_09');
    expect(await oldest()).toBeGreaterThanOrEqual(Date.parse('2026-09-01T00:00:00Z'));
    expect(await rollupsDifferingFromPoints()).toBe(0);
    // One month before 13:37:11 on 25 October: the cut falls inside the Berlin day of 25 hours.
    await pool.query('UPDATE accounts SET retention_months = 1');
    const retention = new RetentionJob({
      ...common,
      databaseUrl: String(t.orm.config.get('clientUrl')),
      clock: () => new Date('2026-11-25T13:37:11.123Z'),
      chunk: 50,
      pauseMs: 0,
    });
    expect((await retention.run())?.deleted).toBeGreaterThan(0);
    // Cut at 13:00, the hour: the points of 13:00–13:37 stay with their hour's rollup.
    expect(await oldest()).toBeGreaterThanOrEqual(Date.parse('2026-10-25T13:00:00Z'));
    expect(await oldest()).toBeLessThan(Date.parse('2026-10-25T13:37:11.123Z'));
    expect(await rollupsDifferingFromPoints()).toBe(0);
    for (let i = 0; i < 20; i++) await expectSameAsPoints(randomQuery(`twin.id = '${fx.ids.Meter}'`));
  });

  it('of a deleted state are read no more, as its points are not', async () => {
    const call = caller(t, bearer(await login(t)));
    expect((await call('DELETE', `/xapi/v1/states/${fx.ids.power}`)).statusCode).toBe(204);
    const byState = `SELECT state.key AS key, bucket(1d) AS b, count(*), sum(value) WHERE twin.id = '${fx.ids.Meter}' AND time >= '${iso(START)}' GROUP BY key, b`;
    await expectSameAsPoints(byState);
    const keys = await execute(compilePostgresSql(planQuery(byState, new Date(END)), tenancy));
    expect(new Set(keys.map((r) => r.c0))).toEqual(new Set(['energy']));
  });
});
