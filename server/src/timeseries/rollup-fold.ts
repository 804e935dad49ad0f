import type pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import { LeaderTimer } from '../platform/leader-timer.js';
import { FOLD_GRACE_MS, HOUR_MS } from './rollups.js';

/** Leadership of the rollup fold (one node folds). */
export const ROLLUP_FOLD_LOCK = 0x524f_4c4c; // "ROLL"

export interface FoldOptions {
  /** Hours past the watermark folded per transaction (catching up on history goes in steps). */
  maxHours?: number;
  /** Marked hours re-folded per transaction. */
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
 * Folds closed hours into `ts_rollup_hourly` (ADR 0122), off the write path. Each round is one
 * transaction:
 * 1. lock the watermark row, and lock marked hours before the new watermark in key order (a writer
 *    holding a mark's lock commits first; its points are then visible to step 4), and delete them;
 * 2. the new watermark: the hour `FOLD_GRACE_MS` before `now`, at most `maxHours` ahead;
 * 3. delete the rollups of the marked hours and of the hours up to the new watermark;
 * 4. fold them again from the points (each state's range through its (state_id, time) index);
 * 5. store the watermark.
 * Readers see the old rollups, marks and watermark until the commit, then all the new ones.
 */
export async function foldRollups(pool: pg.Pool, now: Date, options: FoldOptions = {}): Promise<FoldReport> {
  const report: FoldReport = { hours: 0, marks: 0, foldedBefore: new Date(0) };
  const maxRounds = options.maxRounds ?? 20;
  for (let round = 0; round < maxRounds; round++) {
    const step = await foldRound(pool, now, options);
    report.hours += step.hours;
    report.marks += step.marks;
    report.foldedBefore = step.foldedBefore;
    if (!step.more) break;
  }
  return report;
}

async function foldRound(
  pool: pg.Pool,
  now: Date,
  options: FoldOptions,
): Promise<{ hours: number; marks: number; foldedBefore: Date; more: boolean }> {
  const maxHours = options.maxHours ?? 24;
  const maxMarks = options.maxMarks ?? 10_000;
  const closed = Math.floor((now.getTime() - FOLD_GRACE_MS) / HOUR_MS) * HOUR_MS;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ b: Date }>(
      'SELECT folded_before AS b FROM ts_rollup_fold FOR UPDATE',
    );
    const from = rows[0]!.b.getTime();
    const to = Math.max(from, Math.min(closed, from + maxHours * HOUR_MS));
    const marks = await client.query<{ state_id: string; hour: Date }>(
      `SELECT state_id, hour FROM ts_rollup_dirty WHERE hour < $1 ORDER BY state_id, hour LIMIT $2 FOR UPDATE`,
      [new Date(to), maxMarks],
    );
    if (to === from && marks.rows.length === 0) {
      await client.query('ROLLBACK');
      return { hours: 0, marks: 0, foldedBefore: new Date(from), more: false };
    }
    const stateIds = marks.rows.map((m) => m.state_id);
    const hours = marks.rows.map((m) => m.hour);
    const range = [new Date(from), new Date(to)];
    await client.query(
      'DELETE FROM ts_rollup_dirty WHERE (state_id, hour) IN (SELECT * FROM unnest($1::uuid[], $2::timestamptz[]))',
      [stateIds, hours],
    );
    await client.query(
      `DELETE FROM ts_rollup_hourly WHERE (hour >= $1 AND hour < $2)
          OR (state_id, hour) IN (SELECT * FROM unnest($3::uuid[], $4::timestamptz[]))`,
      [...range, stateIds, hours],
    );
    // A statement after the marks' locks: it sees the points of every writer that held one.
    await client.query(
      `INSERT INTO ts_rollup_hourly (state_id, hour, n_rows, n_values, v_sum, v_min, v_max,
                                     first_time, first_value, last_time, last_value)
       ${FOLD} FROM (
         SELECT p.state_id, p."time", p.value FROM data_states s CROSS JOIN LATERAL (
           SELECT q.state_id, q."time", q.value FROM ts_points q
            WHERE q.state_id = s.id AND q."time" >= $1 AND q."time" < $2) p
         UNION ALL
         SELECT q.state_id, q."time", q.value FROM unnest($3::uuid[], $4::timestamptz[]) AS m(s, h)
           JOIN ts_points q ON q.state_id = m.s AND q."time" >= m.h AND q."time" < m.h + interval '1 hour'
          WHERE m.h < $1) p
       GROUP BY 1, 2`,
      [...range, stateIds, hours],
    );
    await client.query('UPDATE ts_rollup_fold SET folded_before = $1', [new Date(to)]);
    await client.query('COMMIT');
    return {
      hours: (to - from) / HOUR_MS,
      marks: marks.rows.length,
      foldedBefore: new Date(to),
      more: to < closed || marks.rows.length === maxMarks,
    };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
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
