import fs from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import pino from 'pino';
import { startBenchDatabase } from './bench-database.js';
import { ENTITIES } from '../server/src/entities.js';
import { newId } from '../server/src/platform/crypto/ids.js';
import { migrateUp, openOrm } from '../server/src/platform/db/orm.js';
import { PartitionMaintenance } from '../server/src/timeseries/partitions.js';
import { planQuery } from '../server/src/timeseries/query/query.analyze.js';
import { compilePostgresSql } from '../server/src/timeseries/query/query.compile-rollup.js';
import { compileSql, type CompiledSql } from '../server/src/timeseries/query/query.compile-sql.js';
import { foldRollups } from '../server/src/timeseries/rollup-fold.js';
import { HOUR_MS, markLateHours, refoldFrom } from '../server/src/timeseries/rollups.js';
import { copyPoints, encodePointsCopy } from '../server/src/timeseries/targets/points-copy.js';
import type { TimeSeriesPoint } from '../server/src/timeseries/timeseries.types.js';
import { seedStates } from './timeseries-query.js';

/**
 * `npm run bench:rollups` — not a test. CPU time, not wall clock (the machine may be busy): the
 * server process's (process.cpuUsage) and the PostgreSQL backend's (/proc/<pid>/stat), per batch.
 * 1. Write path: 6,000 points, one per state, in a transaction through the state engine's COPY:
 *    without any rollup work, with the late-point check (in-order points), with every point late
 *    (6,000 marks, the worst case), and with the statement trigger of the design this replaced.
 * 2. The fold: one hour of 10,000 states × 60 points, and the re-fold of 6,000 marked hours.
 * 3. Reads: EXPLAIN (ANALYZE, BUFFERS) of daily means over a year and 6-hourly means over 90 days
 *    of one state with a year of 1-minute points, through the rollups and on points alone.
 * BENCH_ROUNDS (default 15) sets the rounds per write variant.
 */

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const STATES = 10_000;
const BATCH = 6_000;
const log = pino({ level: 'warn' });
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

/** utime + stime of a process in milliseconds (clock ticks of 10 ms). */
async function cpuMs(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

interface Sample {
  wallMs: number;
  nodeMs: number;
  backendMs: number;
}

async function measured(
  client: pg.PoolClient,
  backendPid: number,
  work: () => Promise<void>,
): Promise<Sample> {
  const [b0, n0, w0] = [await cpuMs(backendPid), process.cpuUsage(), performance.now()];
  await work();
  const wallMs = performance.now() - w0;
  const n = process.cpuUsage(n0);
  return { wallMs, nodeMs: (n.user + n.system) / 1000, backendMs: (await cpuMs(backendPid)) - b0 };
}

const batch = (states: string[], time: number): TimeSeriesPoint[] =>
  states.slice(0, BATCH).map((stateId, i) => ({
    accountId: 'bench',
    twinId: 'bench',
    stateId,
    stateKey: 'k',
    time: new Date(time + i),
    value: i % 100,
    text: null,
  }));

/** The statement trigger this design replaced (a grouped upsert of every insert's transition table). */
const OLD_TRIGGER = `
  CREATE FUNCTION bench_rollup_fold() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN
    INSERT INTO ts_rollup_hourly AS r SELECT state_id, date_trunc('hour', "time", 'UTC'), count(*), count(value),
      sum(value), min(value), max(value), min("time") FILTER (WHERE value IS NOT NULL),
      (array_agg(value ORDER BY "time", value) FILTER (WHERE value IS NOT NULL))[1],
      max("time") FILTER (WHERE value IS NOT NULL),
      (array_agg(value ORDER BY "time" DESC, value DESC) FILTER (WHERE value IS NOT NULL))[1]
      FROM new_points GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (state_id, hour) DO UPDATE SET n_rows = r.n_rows + excluded.n_rows,
      n_values = r.n_values + excluded.n_values, v_sum = coalesce(r.v_sum + excluded.v_sum, r.v_sum, excluded.v_sum),
      v_min = least(r.v_min, excluded.v_min), v_max = greatest(r.v_max, excluded.v_max);
    RETURN NULL; END $f$;
  CREATE TRIGGER bench_rollup AFTER INSERT ON ts_points REFERENCING NEW TABLE AS new_points
    FOR EACH STATEMENT EXECUTE FUNCTION bench_rollup_fold();`;

async function writePath(pool: pg.Pool, states: string[]): Promise<void> {
  const client = await pool.connect();
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const inTransaction = async (work: () => Promise<void>) => {
    await client.query('BEGIN');
    await work();
    await client.query('COMMIT');
  };
  const plainCopy = (points: TimeSeriesPoint[]) =>
    pipeline(
      Readable.from([encodePointsCopy(points)]),
      client.query(copyFrom('COPY ts_points (state_id, "time", value, text) FROM STDIN (FORMAT binary)')),
    );
  // Each variant: its points for a round (built outside the measurement), and the write.
  const variants: Record<
    string,
    [(round: number) => TimeSeriesPoint[], (points: TimeSeriesPoint[]) => Promise<void>]
  > = {
    'no rollup work (COPY alone)': [
      (r) => batch(states, Date.now() - r),
      (p) => inTransaction(() => plainCopy(p)),
    ],
    'late-point check, in-order points': [
      (r) => batch(states, Date.now() - r),
      (p) => inTransaction(() => copyPoints(client, p)),
    ],
    'every point late (6,000 marks)': [
      (r) => batch(states, Date.now() - 3 * HOUR_MS - r * HOUR_MS),
      (p) => inTransaction(() => copyPoints(client, p)),
    ],
    'statement trigger (replaced design)': [
      (r) => batch(states, Date.now() - 5 * HOUR_MS - r * 1000),
      (p) => inTransaction(() => plainCopy(p)),
    ],
  };
  const TRIGGERED = 'statement trigger (replaced design)';
  // The check alone, on in-order points (no statement): what every batch pays.
  const inOrder = batch(states, Date.now());
  const noDatabase = { query: () => Promise.reject(new Error('in-order points need no statement')) };
  const c0 = process.cpuUsage();
  for (let i = 0; i < 1000; i++) await markLateHours(noDatabase, inOrder, Date.now());
  const c1 = process.cpuUsage(c0);
  console.log(
    `\nThe late-point check alone: ${((c1.user + c1.system) / 1000).toFixed(1)} µs CPU per ${BATCH.toLocaleString('en')} points`,
  );
  const samples = new Map<string, Sample[]>(Object.keys(variants).map((k) => [k, []]));
  // Interleaved rounds, two warm-ups, so every variant sees the same machine and table size.
  for (let round = 0; round < ROUNDS + 2; round++) {
    const entries = Object.entries(variants);
    // Rotated each round, so no variant always follows the same one (garbage collection, caches).
    for (const [name, [points, write]] of [
      ...entries.slice(round % entries.length),
      ...entries.slice(0, round % entries.length),
    ]) {
      if (name === TRIGGERED) await client.query(OLD_TRIGGER);
      const batchPoints = points(round);
      const sample = await measured(client, pid, () => write(batchPoints));
      if (name === TRIGGERED)
        await client.query('DROP TRIGGER bench_rollup ON ts_points; DROP FUNCTION bench_rollup_fold()');
      if (round >= 2) samples.get(name)!.push(sample);
    }
    await client.query('DELETE FROM ts_rollup_dirty');
  }
  client.release();
  console.log(`\nWrite path: ${BATCH.toLocaleString('en')} points (one per state) in one transaction`);
  console.log('variant | wall ms (median) | server CPU ms (mean) | PostgreSQL backend CPU ms (mean)');
  for (const [name, list] of samples) {
    const mean = (f: (s: Sample) => number) => list.reduce((a, s) => a + f(s), 0) / list.length;
    console.log(
      `${name} | ${median(list.map((s) => s.wallMs)).toFixed(1)} | ${mean((s) => s.nodeMs).toFixed(1)} | ${mean((s) => s.backendMs).toFixed(1)}`,
    );
  }
}

/** The fold's cost: server wall time and the backend's CPU of the fold connection (max 1). */
async function foldCost(url: string, label: string, now: Date): Promise<void> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  pool.on('error', () => undefined);
  const client = await pool.connect();
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  client.release();
  const b0 = await cpuMs(pid);
  const w0 = performance.now();
  const report = await foldRollups(pool, now, { maxHours: 1 });
  const wall = performance.now() - w0;
  console.log(
    `${label}: ${report.hours} h, ${report.marks} marks — ${wall.toFixed(0)} ms wall, ${(await cpuMs(pid)) - b0} ms backend CPU`,
  );
  await pool.end();
}

async function explain(pool: pg.Pool, label: string, statement: CompiledSql): Promise<void> {
  // knex-style `?` placeholders to $n for pg.
  let n = 0;
  const sql = statement.sql.replace(/\?/g, () => `$${++n}`);
  const { rows } = await pool.query<{ 'QUERY PLAN': unknown }>(
    `EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ${sql}`,
    statement.params,
  );
  if (process.env.BENCH_PLANS) {
    const text = await pool.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS) ${sql}`,
      statement.params,
    );
    console.log(text.rows.map((r) => r['QUERY PLAN']).join('\n'));
  }
  const plan = (
    rows[0]!['QUERY PLAN'] as Array<{ Plan: Record<string, number>; 'Execution Time': number }>
  )[0]!;
  const top = plan.Plan;
  // The plain statement, timed: EXPLAIN ANALYZE's per-row instrumentation inflates row-heavy plans.
  const runs: number[] = [];
  for (let i = 0; i < 25; i++) {
    const t0 = performance.now();
    await pool.query(sql, statement.params);
    if (i >= 5) runs.push(performance.now() - t0);
  }
  console.log(
    `${label}: ${plan['Execution Time'].toFixed(1)} ms under EXPLAIN, ${median(runs).toFixed(1)} ms median of 20 runs, ` +
      `${top['Actual Rows']} rows, buffers hit ${top['Shared Hit Blocks']} read ${top['Shared Read Blocks']}` +
      (top['Temp Read Blocks'] ? `, temp read ${top['Temp Read Blocks']}` : ''),
  );
}

async function main() {
  const { dir, url, embedded } = await startBenchDatabase('rollups');
  const orm = await openOrm({ clientUrl: url, entities: ENTITIES, poolMax: 2 });
  try {
    await migrateUp(orm);
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    // The cluster stops at the end; idle connections dropped then are no error.
    pool.on('error', () => undefined);
    const end = new Date();
    await new PartitionMaintenance({ pool, log, clock: () => end }).run();
    // Reads first, with one state in the table (the fold walks every state).
    const yearState = newId();
    const tenancy = await seedStates(pool, [yearState]);
    const yearStart = end.getTime() - 365 * 24 * HOUR_MS;
    await pool.query(
      `INSERT INTO ts_points (state_id, "time", value, text)
       SELECT $1, t, (extract(epoch FROM t)::bigint % 997)::float8, NULL
         FROM generate_series($2::timestamptz, $3::timestamptz, interval '1 minute') AS t`,
      [yearState, new Date(yearStart), end],
    );
    await refoldFrom(pool, new Date(yearStart));
    const f0 = performance.now();
    const folded = await foldRollups(pool, end, { maxHours: 24 * 31, maxRounds: 100 });
    console.log(
      `Folded a year of 1-minute points (${folded.hours} h) in ${(performance.now() - f0).toFixed(0)} ms`,
    );
    await pool.query('VACUUM ANALYZE');
    console.log('\nReads of one state, EXPLAIN (ANALYZE, BUFFERS), top node');
    const day = 24 * HOUR_MS;
    for (const [label, text] of [
      [
        'daily means, 1 year',
        `SELECT bucket(1d) AS d, mean(value) WHERE state.id = '${yearState}' AND time >= '${new Date(end.getTime() - 365 * day).toISOString()}' GROUP BY d`,
      ],
      [
        '6-hourly means, 90 days',
        `SELECT bucket(6h) AS d, mean(value) WHERE state.id = '${yearState}' AND time >= '${new Date(end.getTime() - 90 * day).toISOString()}' GROUP BY d`,
      ],
    ] as const) {
      const plan = planQuery(text, end);
      for (let i = 0; i < 3; i++)
        await explain(pool, `${label}, rollups (warm-up)`, compilePostgresSql(plan, tenancy));
      await explain(pool, `${label}, rollups`, compilePostgresSql(plan, tenancy));
      await explain(pool, `${label}, points`, compileSql(plan, tenancy));
    }

    if (process.env.BENCH_PARTS === 'reads') return;
    const states = Array.from({ length: STATES }, () => newId());
    await seedStates(pool, states);
    await writePath(pool, states);

    console.log('\nThe fold');
    const hour = Math.floor(end.getTime() / HOUR_MS) * HOUR_MS + 10 * HOUR_MS;
    await pool.query(
      `INSERT INTO ts_points (state_id, "time", value, text)
       SELECT s, $2::timestamptz + m * interval '1 minute', m, NULL FROM unnest($1::uuid[]) AS s, generate_series(0, 59) AS m`,
      [states, new Date(hour)],
    );
    await pool.query('VACUUM ANALYZE ts_points');
    // Everything before that hour is folded; then 6,000 hours are marked by late points.
    await foldRollups(pool, new Date(hour + 2 * HOUR_MS), { maxHours: 24, maxRounds: 100 });
    await foldCost(
      url,
      `one hour, ${STATES.toLocaleString('en')} states × 60 points`,
      new Date(hour + 3 * HOUR_MS),
    );
    const client = await pool.connect();
    await client.query('BEGIN');
    await copyPoints(client, batch(states, hour - 6 * HOUR_MS), hour + 3 * HOUR_MS);
    await client.query('COMMIT');
    client.release();
    await foldCost(url, 're-fold of 6,000 marked hours', new Date(hour + 3 * HOUR_MS));
    await pool.end();
  } finally {
    await orm.close(true);
    await embedded.stop().catch(() => undefined);
    await fs.rm(dir, { recursive: true, force: true });
  }
}

await main();
