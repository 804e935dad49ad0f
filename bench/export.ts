import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import pino from 'pino';
import { startBenchDatabase } from './bench-database.js';
import { ENTITIES } from '../server/src/entities.js';
import { exportCsv } from '../server/src/exports/export-csv.js';
import { writeExportFile } from '../server/src/exports/export-files.js';
import {
  DEFAULT_FORMAT,
  DEFAULT_SHAPE,
  type ExportDefinition,
} from '../server/src/exports/export-plan.types.js';
import { newId } from '../server/src/platform/crypto/ids.js';
import { migrateUp, openOrm } from '../server/src/platform/db/orm.js';
import { PartitionMaintenance } from '../server/src/timeseries/partitions.js';
import { PostgresTarget } from '../server/src/timeseries/targets/postgres.target.js';
import { seedStates } from './timeseries-query.js';

/**
 * `npm run bench:export` — not a test. On one embedded PostgreSQL, in the same run, the same rows:
 * 1. a plain `COPY (SELECT time, state, value … ORDER BY time) TO STDOUT (FORMAT csv)` into a file;
 * 2. the export engine (one row per point, windows through the PostgreSQL target, CSV writer, file).
 * Each reports rows/s and the peak RSS of this process while it ran (sampled every 20 ms).
 * BENCH_EXPORT_POINTS (default 10000000) points over BENCH_EXPORT_STATES (default 100) states.
 */

const POINTS = Number(process.env.BENCH_EXPORT_POINTS ?? 10_000_000);
const STATES = Number(process.env.BENCH_EXPORT_STATES ?? 100);
const log = pino({ level: 'warn' });
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

/** Runs `work`, sampling RSS; returns its duration in ms and the peak RSS seen. */
async function measured(work: () => Promise<void>): Promise<{ ms: number; peakRss: number }> {
  global.gc?.();
  let peakRss = process.memoryUsage.rss();
  const timer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 20);
  const t0 = performance.now();
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return { ms: performance.now() - t0, peakRss: Math.max(peakRss, process.memoryUsage.rss()) };
}

async function main() {
  const { dir, url, embedded } = await startBenchDatabase('export');
  const cleanup = async () => {
    await embedded.stop().catch(() => undefined);
    await fs.rm(dir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  const orm = await openOrm({ clientUrl: url, entities: ENTITIES, poolMax: 2 });
  try {
    await migrateUp(orm);
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    pool.on('error', () => undefined);
    const clock = new Date();
    await new PartitionMaintenance({ pool, log, clock: () => clock }).run();
    const stateIds = Array.from({ length: STATES }, () => newId());
    const { accountId } = await seedStates(pool, stateIds);
    // Points spread evenly over the last 20 days, all states at each instant (as packets arrive).
    const instants = Math.ceil(POINTS / STATES);
    const from = clock.getTime() - 20 * 86_400_000;
    const stepMs = Math.max(1, Math.floor((20 * 86_400_000) / instants));
    console.log(
      `Stellwerk export bench — ${os.cpus().length} CPUs, ${fmt(instants * STATES)} points, ${STATES} states`,
    );
    await pool.query(
      `INSERT INTO ts_points (state_id, "time", value, text)
       SELECT s, to_timestamp(($2::float8 + g * $3::float8) / 1000), g * 0.25, NULL
         FROM generate_series(0, $4::int - 1) AS g, unnest($1::uuid[]) AS s`,
      [stateIds, from, stepMs, instants],
    );
    await pool.query('ANALYZE ts_points');
    const rows = instants * STATES;
    const range = { from: new Date(from), to: new Date(from + instants * stepMs) };

    const copyFile = path.join(dir, 'copy.csv');
    const copy = await measured(async () => {
      const client = await pool.connect();
      try {
        const sql = `COPY (SELECT p."time", s.key, p.value FROM ts_points p JOIN data_states s ON s.id = p.state_id
                       WHERE s.account_id = '${accountId}' ORDER BY p."time", p.state_id) TO STDOUT (FORMAT csv, HEADER)`;
        await pipeline(client.query(copyTo(sql)), createWriteStream(copyFile));
      } finally {
        client.release();
      }
    });

    const twins = await pool.query<{ id: string; title: string }>(
      'SELECT id, title FROM digital_twins WHERE account_id = $1',
      [accountId],
    );
    const states = await pool.query<{ id: string; twin_id: string }>(
      'SELECT id, twin_id FROM data_states WHERE account_id = $1',
      [accountId],
    );
    // The twin's cells as a plan without meta columns writes them: title and hierarchy.
    const source = {
      subjects: twins.rows.map((t) => ({ id: t.id, cells: [t.title, t.title] })),
      states: states.rows.map((s) => ({ id: s.id, subjectId: s.twin_id, key: 'flow', unit: 'm³/h' })),
    };
    const def: ExportDefinition = {
      selection: { operator: 'and', conditions: [], states: [] },
      range: { from: range.from.toISOString(), to: range.to.toISOString() },
      timeZone: 'Europe/Berlin',
      shape: DEFAULT_SHAPE,
      format: DEFAULT_FORMAT,
    };
    const target = new PostgresTarget('postgres', pool);
    let written = 0;
    const engine = await measured(async () => {
      await writeExportFile(
        dir,
        newId(),
        false,
        exportCsv(
          def,
          source,
          {
            readPoints: (filter) => target.readPoints(filter),
            query: () => Promise.reject(new Error('no averages in this bench')),
          },
          range,
          (count) => (written += count),
        ),
      );
    });
    if (written !== rows) throw new Error(`the export wrote ${written} rows of ${rows}`);
    const line = (name: string, m: { ms: number; peakRss: number }) =>
      console.log(
        `${name.padEnd(34)} ${fmt((rows * 1000) / m.ms).padStart(12)} rows/s   peak RSS ${mb(m.peakRss)}`,
      );
    line('COPY … TO STDOUT (csv) → file', copy);
    line('export engine → file', engine);
    console.log(`\nexport / COPY: ${((copy.ms / engine.ms) * 100).toFixed(0)} % of COPY's rate`);
    await pool.end();
  } finally {
    await orm.close();
    await cleanup();
  }
}

await main();
