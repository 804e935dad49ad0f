/**
 * Hourly rollups of `ts_points` (`ts_rollup_hourly`, docs/adr/0122-timeseries-rollups.md): per state
 * and UTC hour the point count, the count of values, their sum, min and max, and the earliest and
 * latest value. A statement trigger on `ts_points` folds every inserted batch into them, in the
 * inserting transaction (migration 20261127170000); retention and partition maintenance delete
 * whole hours of them with the points (both cut at hour boundaries).
 */

export const HOUR_MS = 3_600_000;

/** Retention and partition cutoffs fall on whole hours, so whole rollup hours go with the points. */
export const floorToHour = (time: Date): Date => new Date(Math.floor(time.getTime() / HOUR_MS) * HOUR_MS);
