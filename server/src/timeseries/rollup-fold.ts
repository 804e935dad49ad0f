import type pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import { LeaderTimer } from '../platform/leader-timer.js';
import { FOLD_GRACE_MS, HOUR_MS } from './rollups.js';

/** Leadership of the rollup fold (one node folds). */
export const ROLLUP_FOLD_LOCK = 0x524f_4c4c; // "ROLL"

export interface FoldOptions {
  /** Hours past the watermark folded per transaction (catching up on history goes in steps). */
  maxHours?: number;
  /** Marked hours re-folded per transaction (writers of late points for them wait that long). */
  maxMarks?: number;
  /** Transactions per call; the next call goes on where this one stopped. */
  maxRounds?: number;
}

export interface FoldReport {
  /** Hours the watermark moved forward, over all rounds. */
  hours: number;
  /** Marked (state, hour) pairs re-folded. */
  marks: number;
  foldedBefore: Date;
}

/** Per hour and state: counts, sum, min, max, and first/last value with ties to the smaller/larger. */
const FOLD = `
  SELECT p.state_id, date_trunc('hour', p."time", 'UTC'), count(*), count(p.value), sum(p.value),
         min(p.value), max(p.value),
         min(p."time") FILTER (WHERE p.value IS NOT NULL),
         (array_agg(p.value ORDER BY p."time", p.value) FILTER (WHERE p.value IS NOT NULL))[1],
         max(p."time") FILTER (WHERE p.value IS NOT NULL),
         (array_agg(p.value ORDER BY p."time" DESC, p.value DESC) FILTER (WHERE p.value IS NOT NULL))[1]`;

/**
 * Folds closed hours into `ts_rollup_hourly` (ADR 0122), off the write path, in two kinds of
 * transactions, each deleting the rollups it replaces and folding them again from the points:
 * - **hours**: lock the watermark row; fold every state's hours from the watermark to the hour
 *   `FOLD_GRACE_MS` before `now` (at most `maxHours`; each state's range through its
 *   (state_id, time) index); move the watermark. Marks are left alone: a marked hour in the range
 *   is re-folded by the next kind too, which costs a little and keeps this long transaction from
 *   holding locks that writers of late points wait on.
 * - **marks**: lock up to `maxMarks` marks below the watermark in key order (a writer holding one
 *   commits first, so the fold's next statement sees its points), delete them, re-fold their hours.
 * Readers see the old rollups, marks and watermark until a commit, then all the new ones.
 */
export async function foldRollups(pool: pg.Pool, now: Date, options: FoldOptions = {}): Promise<FoldReport> {
  const report: FoldReport = { hours: 0, marks: 0, foldedBefore: new Date(0) };
  const maxRounds = options.maxRounds ?? 20;
  const closed = Math.floor((now.getTime() - FOLD_GRACE_MS) / HOUR_MS) * HOUR_MS;
  for (let round = 0; round < maxRounds; round++) {
    const hours = await inTransaction(pool, (client) => foldHours(client, closed, options.maxHours ?? 24));
    report.hours += hours.hours;
    report.foldedBefore = hours.foldedBefore;
    if (hours.foldedBefore.getTime() >= closed) break;
  }
  for (let round = 0; round < maxRounds; round++) {
    const maxMarks = options.maxMarks ?? 2_000;
    const marks = await inTransaction(pool, (client) => foldMarks(client, maxMarks));
    report.marks += marks;
    if (marks < maxMarks) break;
  }
  return report;
}

async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

const INSERT = `INSERT INTO ts_rollup_hourly (state_id, hour, n_rows, n_values, v_sum, v_min, v_max,
                                              first_time, first_value, last_time, last_value)`;

async function foldHours(
  client: pg.PoolClient,
  closed: number,
  maxHours: number,
): Promise<{ hours: number; foldedBefore: Date }> {
  const { rows } = await client.query<{ b: Date }>(
    'SELECT folded_before AS b FROM ts_rollup_fold FOR UPDATE',
  );
  const from = rows[0]!.b.getTime();
  const to = Math.max(from, Math.min(closed, from + maxHours * HOUR_MS));
  if (to === from) return { hours: 0, foldedBefore: new Date(from) };
  const range = [new Date(from), new Date(to)];
  await client.query('DELETE FROM ts_rollup_hourly WHERE hour >= $1 AND hour < $2', range);
  await client.query(
    `${INSERT} ${FOLD} FROM data_states s CROSS JOIN LATERAL (
       SELECT q.state_id, q."time", q.value FROM ts_points q
        WHERE q.state_id = s.id AND q."time" >= $1 AND q."time" < $2) p
     GROUP BY 1, 2`,
    range,
  );
  await client.query('UPDATE ts_rollup_fold SET folded_before = $1', [new Date(to)]);
  return { hours: (to - from) / HOUR_MS, foldedBefore: new Date(to) };
}

async function foldMarks(client: pg.PoolClient, maxMarks: number): Promise<number> {
  const marks = await client.query<{ state_id: string; hour: Date }>(
    `SELECT state_id, hour FROM ts_rollup_dirty
      WHERE hour < (SELECT folded_before FROM ts_rollup_fold)
      ORDER BY state_id, hour LIMIT $1 FOR UPDATE`,
    [maxMarks],
  );
  if (marks.rows.length === 0) return 0;
  const pairs = [marks.rows.map((m) => m.state_id), marks.rows.map((m) => m.hour)];
  const marked = 'SELECT * FROM unnest($1::uuid[], $2::timestamptz[])';
  await client.query(`DELETE FROM ts_rollup_dirty WHERE (state_id, hour) IN (${marked})`, pairs);
  await client.query(`DELETE FROM ts_rollup_hourly WHERE (state_id, hour) IN (${marked})`, pairs);
  // A statement after the marks' locks: it sees the points of every writer that held one.
  await client.query(
    `${INSERT} ${FOLD} FROM unnest($1::uuid[], $2::timestamptz[]) AS m(s, h)
       JOIN ts_points p ON p.state_id = m.s AND p."time" >= m.h AND p."time" < m.h + interval '1 hour'
     GROUP BY 1, 2`,
    pairs,
  );
  return marks.rows.length;
}

/** The fold as a leader-only timer: every minute, so marked hours are re-folded soon. */
export function createRollupFold(options: {
  databaseUrl: string;
  pool: pg.Pool;
  log: FastifyBaseLogger;
  everyMs?: number;
}): LeaderTimer {
  return new LeaderTimer('timeseries-rollup-fold', {
    databaseUrl: options.databaseUrl,
    lockKey: ROLLUP_FOLD_LOCK,
    everyMs: options.everyMs ?? 60_000,
    // The wall clock, never a test's: the write path marks late points by it (rollups.ts).
    clock: () => new Date(),
    log: options.log,
    round: (now) => foldRollups(options.pool, now),
  });
}
