import fs from 'node:fs/promises';
import os from 'node:os';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import pino from 'pino';
import { startBenchDatabase } from './bench-database.js';
import { ENTITIES } from '../server/src/entities.js';
import { newId } from '../server/src/platform/crypto/ids.js';
import { migrateUp, openOrm } from '../server/src/platform/db/orm.js';
import { PartitionMaintenance } from '../server/src/timeseries/partitions.js';
import { TransactionalPointSink } from '../server/src/timeseries/point-sink.js';
import { foldRollups } from '../server/src/timeseries/rollup-fold.js';
import { refoldFrom } from '../server/src/timeseries/rollups.js';
import type { TimeSeriesPoint } from '../server/src/timeseries/timeseries.types.js';
import { byStateId, byTwinTitle, HourlyMeanBench, seedStates } from './timeseries-query.js';

/**
 * `npm run bench:timeseries` — not a test. On one embedded PostgreSQL, in the same run:
 * 1. rows/s into ts_points: through the state engine's point sink (the production path since points
 *    are written in the transaction that changed their states: COPY of 1,000 points per transaction,
 *    one transaction per state-engine commit), raw `unnest` inserts of 1,000 rows (prepared) and one
 *    raw COPY stream — interleaved rounds, medians reported, as ratios. The points are from the last
 *    hour, as ingest writes them; a fourth run per round writes 3-day-old points through the sink
 *    (a replay: its transactions also mark their hours for the rollup re-fold), reported without target;
 * 2. ts_points filled with 10 million points (1,000 states × 30 days), then p50/p99 of "hourly mean
 *    over 30 days of one state" through the query language (bench/timeseries-query.ts).
 *    BENCH_POINTS (default 200000) sets the points per throughput round,
 *    BENCH_FILL (default 10000000) the fill. docs/performance.md has the figures.
 */

const POINTS = Number(process.env.BENCH_POINTS ?? 200_000);
const FILL = Number(process.env.BENCH_FILL ?? 10_000_000);
const ROUNDS = 5;
const QUERIES = 500;
const log = pino({ level: 'warn' });
const now = () => performance.now();
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function makePoints(count: number, states: string[], start: number): TimeSeriesPoint[] {
  return Array.from({ length: count }, (_, i) => ({
    accountId: 'bench',
    twinId: 'bench',
    stateId: states[i % states.length]!,
    stateKey: 'k',
    time: new Date(start + i),
    value: i * 0.25,
    text: null,
  }));
}

/** The baseline: a plain prepared `unnest` INSERT of 1,000 rows per statement, one connection. */
async function rawUnnest(pool: pg.Pool, points: TimeSeriesPoint[]): Promise<number> {
  const client = await pool.connect();
  const t0 = now();
  for (let i = 0; i < points.length; i += 1000) {
    const chunk = points.slice(i, i + 1000);
    await client.query({
      name: 'bench_raw_unnest',
      text:
        'INSERT INTO ts_points (state_id, "time", value, text) ' +
        'SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::float8[], $4::text[])',
      values: [
        chunk.map((p) => p.stateId),
        chunk.map((p) => p.time.toISOString()),
        chunk.map((p) => p.value),
        chunk.map((p) => p.text),
      ],
    });
  }
  const ms = now() - t0;
  client.release();
  return (points.length * 1000) / ms;
}

async function rawCopy(pool: pg.Pool, points: TimeSeriesPoint[]): Promise<number> {
  const client = await pool.connect();
  const t0 = now();
  const lines = function* () {
    for (let i = 0; i < points.length; i += 1000) {
      let chunk = '';
      for (const p of points.slice(i, i + 1000))
        chunk += `${p.stateId}\t${p.time.toISOString()}\t${p.value}\t\\N\n`;
      yield chunk;
    }
  };
  await pipeline(
    Readable.from(lines()),
    client.query(copyFrom('COPY ts_points (state_id, "time", value, text) FROM STDIN')),
  );
  const ms = now() - t0;
  client.release();
  return (points.length * 1000) / ms;
}

/**
 * Through the state engine's point sink, as ingest writes points: 1,000 points per transaction (one
 * state-engine commit), each transaction's points by COPY into ts_points (TransactionalPointSink
 * with the postgres target only); timed from the first BEGIN to the last COMMIT.
 */
async function throughSink(pool: pg.Pool, points: TimeSeriesPoint[]): Promise<number> {
  const sink = new TransactionalPointSink({ postgres: true, outbox: false });
  const client = await pool.connect();
  const t0 = now();
  for (let i = 0; i < points.length; i += 1000) {
    await client.query('BEGIN');
    await sink.append(client, points.slice(i, i + 1000));
    await client.query('COMMIT');
  }
  const ms = now() - t0;
  client.release();
  return (points.length * 1000) / ms;
}

async function main() {
  const { dir, url, embedded } = await startBenchDatabase('ts');
  const cleanup = async () => {
    await embedded.stop().catch(() => undefined);
    await fs.rm(dir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  // Kept open for the query part: TimeSeriesQueryService runs its statements through the ORM.
  const orm = await openOrm({ clientUrl: url, entities: ENTITIES, poolMax: 2 });
  try {
    await migrateUp(orm);
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    pool.on('error', () => undefined);
    const clock = new Date();
    await new PartitionMaintenance({ pool, log, clock: () => clock }).run();
    const states = Array.from({ length: 100 }, () => newId());
    console.log(
      `Stellwerk time-series bench — ${os.cpus().length} CPUs, ${POINTS.toLocaleString('en-US')} points per round, ${ROUNDS} rounds\n`,
    );

    const rates = {
      unnest: [] as number[],
      copy: [] as number[],
      sink: [] as number[],
      late: [] as number[],
    };
    // Points as ingest writes them at a steady rate: from the last hour, so none is late. The rounds
    // take seconds each. A batch's points are 1 ms apart; batches start at most 200 s apart, so the 15
    // batches start within 50 minutes (larger BENCH_POINTS overlap in time, which ts_points allows).
    let base = clock.getTime() - 55 * 60_000;
    const step = Math.min(POINTS, 200_000);
    // A replay after a three-day outage: every transaction also marks its hours for the rollup re-fold.
    let lateBase = clock.getTime() - 3 * 24 * 3600_000;
    for (let round = 0; round < ROUNDS; round++) {
      const batch = () => makePoints(POINTS, states, (base += step));
      rates.unnest.push(await rawUnnest(pool, batch()));
      rates.copy.push(await rawCopy(pool, batch()));
      rates.sink.push(await throughSink(pool, batch()));
      rates.late.push(await throughSink(pool, makePoints(POINTS, states, (lateBase += POINTS))));
      console.log(
        `  round ${round + 1}: unnest ${fmt(rates.unnest[round]!)}/s, COPY ${fmt(rates.copy[round]!)}/s, point sink ${fmt(rates.sink[round]!)}/s, late points ${fmt(rates.late[round]!)}/s`,
      );
    }
    const [unnest, copy, sunk] = [median(rates.unnest), median(rates.copy), median(rates.sink)];
    // Ratios per round (the runs of a round are adjacent, so they share the machine's load), then the median.
    const ratio = (of: number[], other: number[]) => median(of.map((w, i) => w / other[i]!)) * 100;
    console.log('\nInsert throughput into ts_points (median of rounds):');
    console.log(`  raw unnest, 1,000 rows/statement:  ${fmt(unnest)} rows/s`);
    console.log(`  raw COPY, one stream:              ${fmt(copy)} rows/s`);
    console.log(`  point sink, 1,000 per transaction: ${fmt(sunk)} rows/s`);
    console.log(
      `  point sink / unnest = ${ratio(rates.sink, rates.unnest).toFixed(0)}% (target ≥ 90%), point sink / COPY = ${ratio(rates.sink, rates.copy).toFixed(0)}% (target ≥ 50%) — medians of the per-round ratios`,
    );
    console.log(
      `  late points (3 days old) through the sink: ${fmt(median(rates.late))} rows/s, ${ratio(rates.late, rates.unnest).toFixed(0)}% of unnest (no target: a replay's cost, with the hours marked for re-folding)`,
    );

    await pool.query('TRUNCATE ts_points');
    const fillStates = Array.from({ length: 1000 }, () => newId());
    const days = 30;
    const end = new Date(Date.UTC(clock.getUTCFullYear(), clock.getUTCMonth(), clock.getUTCDate()));
    const start = new Date(end.getTime() - days * 24 * 3600_000);
    const stepMs = Math.floor((days * 24 * 3600_000 * fillStates.length) / FILL);
    console.log(
      `\nFilling ts_points with ${fmt(FILL)} points (${fillStates.length} states, one point per state every ${(stepMs / 1000).toFixed(0)} s over ${days} days, time-ordered as ingest writes them)…`,
    );
    const f0 = now();
    const perDay = 24 * 3600_000;
    for (let day = 0; day < days; day++) {
      // generate_series keeps the fill fast; the rows arrive in time order across states, like real ingest.
      await pool.query(
        `INSERT INTO ts_points (state_id, "time", value, text)
         SELECT s.id, t, random() * 100, NULL
           FROM generate_series($1::timestamptz, $2::timestamptz - interval '1 millisecond', make_interval(secs => $3::float8 / 1000)) AS t,
                unnest($4::uuid[]) AS s(id)`,
        [
          new Date(start.getTime() + day * perDay),
          new Date(start.getTime() + (day + 1) * perDay),
          stepMs,
          fillStates,
        ],
      );
    }
    // Written past the write path: the rollup watermark goes back to the fill's start, so queries read
    // these hours from the points until they are folded (ADR 0122).
    await refoldFrom(pool, start);
    await pool.query('ANALYZE ts_points');
    const { rows: filled } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM ts_points');
    console.log(`  ${fmt(Number(filled[0]!.n))} rows in ${((now() - f0) / 1000).toFixed(0)} s`);

    const tenancy = await seedStates(pool, fillStates);
    const hourlyMean = new HourlyMeanBench(orm, tenancy, fillStates.length, () => clock);
    const byId = byStateId(fillStates, start, end);
    const measure = (label: string, indexOnly = true) => hourlyMean.measure(label, byId, QUERIES, indexOnly);
    console.log(
      `\nHourly mean over ${days} days of one state (~${fmt(FILL / fillStates.length)} points) through the query language ` +
        `(parse → plan → compile → run, as the endpoint), ${QUERIES} queries on random states (target p99 < 50 ms):`,
    );
    console.log(`  ${byId(0)}`);
    // Fresh pages are not all-visible until (auto)vacuum has passed: every index entry then costs a heap visit.
    await measure('just written (ANALYZE only)', false);
    // The partitions ask autovacuum to pass after every 100,000 inserted rows (partitions.ts): wait for it.
    const w0 = now();
    const vacuumed = async () => {
      const { rows } = await pool.query<{ pending: string }>(
        `SELECT count(*) AS pending FROM pg_stat_user_tables
          WHERE relname LIKE 'ts_points_p%' AND n_live_tup > 0 AND last_autovacuum IS NULL`,
      );
      return Number(rows[0]!.pending) === 0;
    };
    while (!(await vacuumed()) && now() - w0 < 240_000) await new Promise((r) => setTimeout(r, 1000));
    if (await vacuumed())
      await measure(`after autovacuum (came ${((now() - w0) / 1000).toFixed(0)} s later)`);
    else {
      await pool.query('VACUUM ts_points');
      await measure('autovacuum did not come within 4 min; after a manual VACUUM');
    }
    // The states found through the twin title and state key instead of the state id (joins first).
    await hourlyMean.measure('same, by twin title and state key', byTwinTitle(start, end), QUERIES);
    // What the server's fold job does within minutes (480 hours a minute), done here at once.
    const f1 = now();
    await foldRollups(pool, new Date(), { maxHours: 24 * 31, maxRounds: 100 });
    await pool.query('VACUUM ANALYZE ts_rollup_hourly');
    console.log(`  hourly rollups folded in ${((now() - f1) / 1000).toFixed(0)} s`);
    await measure('from the hourly rollups', false);
    console.log('\nCommand: npm run bench:timeseries');
    await pool.end();
  } finally {
    await orm.close();
    await cleanup();
  }
}

await main();
