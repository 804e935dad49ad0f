import type { PointClient } from './timeseries.types.js';

/**
 * Hourly rollups of `ts_points` (`ts_rollup_hourly`, docs/adr/0122-timeseries-rollups.md): per state
 * and UTC hour the point count, the count of values, their sum, min and max, and the earliest and
 * latest value. A background job (rollup-fold.ts) folds hours that closed more than `FOLD_GRACE_MS`
 * ago; the write path only marks the hours of late points (older than `LATE_AFTER_MS` behind its
 * clock) in `ts_rollup_dirty`, which the job re-folds. Readers use a rollup hour only when it lies
 * below the fold watermark and is not marked (query.compile-rollup.ts).
 *
 * Why a point cannot slip past both: an unmarked point is at most `LATE_AFTER_MS` older than the
 * writer's clock, and the job folds only hours that ended `FOLD_GRACE_MS` before its own clock; the
 * hour's fold can miss the point only if the writing transaction was still open more than
 * `FOLD_GRACE_MS - LATE_AFTER_MS` (1 h) after it wrote, less the clock skew between the two nodes.
 */

export const HOUR_MS = 3_600_000;
/** A point older than this behind the writer's clock marks its hour for a re-fold. */
export const LATE_AFTER_MS = HOUR_MS;
/** The job folds hours that ended at least this long ago. */
export const FOLD_GRACE_MS = 2 * HOUR_MS;

/** Retention and partition cutoffs fall on whole hours, so whole rollup hours go with the points. */
export const floorToHour = (time: Date): Date => new Date(Math.floor(time.getTime() / HOUR_MS) * HOUR_MS);

interface TimedPoint {
  stateId: string;
  time: Date;
}

/**
 * Marks the (state, hour) pairs of points older than `LATE_AFTER_MS` before `now`, in the caller's
 * transaction (the one inserting the points). In-order ingest pays one comparison per point. The
 * upsert locks an existing mark, so a fold clearing it waits for this transaction and then reads
 * its points; pairs go in key order, the order the fold locks them in, so the two cannot deadlock.
 */
export async function markLateHours(db: PointClient, points: TimedPoint[], now: number): Promise<void> {
  const before = now - LATE_AFTER_MS;
  let late: Map<string, { stateId: string; hour: number }> | undefined;
  for (const point of points) {
    const time = point.time.getTime();
    if (time >= before) continue;
    const hour = Math.floor(time / HOUR_MS) * HOUR_MS;
    late ??= new Map();
    late.set(`${point.stateId}/${hour}`, { stateId: point.stateId, hour });
  }
  if (!late) return;
  const pairs = [...late.values()].sort((a, b) =>
    a.stateId < b.stateId ? -1 : a.stateId > b.stateId ? 1 : a.hour - b.hour,
  );
  await db.query({
    name: 'ts_rollup_dirty_mark',
    text:
      'INSERT INTO ts_rollup_dirty (state_id, hour) ' +
      'SELECT s, to_timestamp(h / 1000) FROM unnest($1::uuid[], $2::float8[]) AS u(s, h) ' +
      'ON CONFLICT (state_id, hour) DO UPDATE SET marked_at = now()',
    values: [pairs.map((p) => p.stateId), pairs.map((p) => p.hour)],
  });
}

/**
 * Moves the watermark back to `time`'s hour (never forward): the job folds everything since again,
 * and readers take those hours from the points until then. For tools that write `ts_points`
 * without the write path (bulk seeds, repairs).
 */
export async function refoldFrom(db: PointClient, time: Date): Promise<void> {
  await db.query('UPDATE ts_rollup_fold SET folded_before = least(folded_before, $1)', [floorToHour(time)]);
}
