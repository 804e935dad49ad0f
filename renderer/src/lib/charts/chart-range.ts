/**
 * A chart's time window and the aggregation the time-series query uses for it (docs/timeseries-query.md):
 * raw points up to an hour, beyond that means with min/max per bucket, the bucket the smallest of a
 * fixed ladder that keeps a state below MAX_BUCKETS points, so a year and five minutes both draw
 * a few hundred points per state.
 */

import { CHART_RANGES, type ChartRange } from '../../../../server/src/dashboards/widget-grid';

export { CHART_RANGES, type ChartRange };

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const RANGE_MS: Record<ChartRange, number> = {
  '5m': 5 * MINUTE,
  '15m': 15 * MINUTE,
  '1h': HOUR,
  '6h': 6 * HOUR,
  '24h': DAY,
  '7d': 7 * DAY,
  '30d': 30 * DAY,
  '90d': 90 * DAY,
  '1y': 365 * DAY,
};

/** Windows up to this long show every point. */
export const RAW_UP_TO_MS = HOUR;
/** At most this many buckets per state in an aggregated window. */
export const MAX_BUCKETS = 400;
/** The shortest custom window: below it there is nothing left to zoom into. */
export const MIN_WINDOW_MS = 10_000;

/** Bucket widths as the query language writes them, shortest first. */
const LADDER: [string, number][] = [
  ['10s', 10_000],
  ['30s', 30_000],
  ['1m', MINUTE],
  ['2m', 2 * MINUTE],
  ['5m', 5 * MINUTE],
  ['10m', 10 * MINUTE],
  ['15m', 15 * MINUTE],
  ['30m', 30 * MINUTE],
  ['1h', HOUR],
  ['2h', 2 * HOUR],
  ['3h', 3 * HOUR],
  ['6h', 6 * HOUR],
  ['12h', 12 * HOUR],
  ['1d', DAY],
  ['2d', 2 * DAY],
  ['1w', 7 * DAY],
];

export interface Bucket {
  /** As written in `bucket(…)`: `5m`, `1d`. */
  text: string;
  ms: number;
}

/** The aggregation for a window of `spanMs`: null for raw points, else the bucket. */
export function bucketFor(spanMs: number): Bucket | null {
  if (spanMs <= RAW_UP_TO_MS) return null;
  const found = LADDER.find(([, ms]) => spanMs / ms <= MAX_BUCKETS) ?? LADDER[LADDER.length - 1]!;
  return { text: found[0], ms: found[1] };
}

/** A closed time window in epoch milliseconds. */
export interface TimeWindow {
  from: number;
  to: number;
}

/** The window a preset range covers, ending at `now`. */
export const presetWindow = (range: ChartRange, now: number): TimeWindow => ({
  from: now - RANGE_MS[range],
  to: now,
});

/** Whether the loaded answer can serve `zoom` as it is (same aggregation, inside the loaded window). */
export function coversZoom(loaded: TimeWindow & { bucket: string | null }, zoom: TimeWindow): boolean {
  const wanted = bucketFor(zoom.to - zoom.from)?.text ?? null;
  return wanted === loaded.bucket && zoom.from >= loaded.from && zoom.to <= loaded.to;
}

/** The window of `full` that a dataZoom's start/end percentages show. */
export function zoomWindow(full: TimeWindow, startPercent: number, endPercent: number): TimeWindow {
  const span = full.to - full.from;
  const clamp = (percent: number) => Math.min(100, Math.max(0, percent));
  return {
    from: Math.round(full.from + (span * clamp(startPercent)) / 100),
    to: Math.round(full.from + (span * clamp(endPercent)) / 100),
  };
}

/**
 * The instant of a wall-clock time (`2026-11-26T10:15` from a datetime-local field) in `timeZone`,
 * so a custom range means the zone the console shows times in, not the browser's.
 */
export function zonedInstant(local: string, timeZone: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(local);
  if (!match) return null;
  const [year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0] = match
    .slice(1)
    .map((part) => Number(part ?? 0));
  return wallClockInstant(Date.UTC(year, month - 1, day, hour, minute, second), timeZone);
}

/**
 * The instant whose wall clock in `timeZone` reads `wall` (that reading written as if it were UTC):
 * the zone's offset at that moment, found by how the zone writes it; twice, as the first guess may
 * sit on the other side of a daylight-saving change.
 */
export function wallClockInstant(wall: number, timeZone: string): number {
  return wall - offsetOf(wall - offsetOf(wall, timeZone), timeZone);
}

/** The wall-clock text (`2026-11-26T10:15`) of an instant in `timeZone`, for a datetime-local field. */
export function zonedLocal(instant: number, timeZone: string): string {
  const wall = new Date(instant + offsetOf(instant, timeZone));
  return wall.toISOString().slice(0, 16);
}

const wallClocks = new Map<string, Intl.DateTimeFormat>();

/** How far `timeZone`'s wall clock is ahead of UTC at `instant`, in milliseconds. */
export function offsetOf(instant: number, timeZone: string): number {
  // Kept per zone: a chart's time ticks ask a few dozen times per drawing.
  let wallClock = wallClocks.get(timeZone);
  if (!wallClock) {
    wallClock = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    wallClocks.set(timeZone, wallClock);
  }
  const parts = wallClock.formatToParts(new Date(instant));
  const get = (type: string) => Number(parts.find((part) => part.type === type)?.value ?? 0);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return wall - Math.floor(instant / 1000) * 1000;
}
