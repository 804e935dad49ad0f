import { HOUR_MS } from '../rollups.js';
import { COLUMNS } from './query.columns.js';
import type { Aggregate, Filter, KeyExpr, Plan } from './query.plan.js';
import { ALL_TIME, toNegationNormalForm } from './query.split.js';
import { zoneOffsetMs } from './query.time.js';

/**
 * Decides whether a query can read hourly rollups (`ts_rollup_hourly`, ADR 0122) for part of its
 * range, and which part. A rollup hour stands in for its points only when nothing the query does
 * needs the points themselves:
 * - every aggregate is one the rollup keeps: count(*), count(value), mean, min, max, sum,
 *   first(value), last(value) (text aggregates and count(text) read points);
 * - every group key is a state or twin column, or a bucket of whole hours whose edges fall on UTC
 *   hours: UTC buckets, or buckets in a zone whose offset is a whole number of hours over the span
 *   (Europe/Berlin since 1893, not Asia/Kolkata);
 * - the filter is state and twin conditions AND-ed with time bounds (value, text or other time
 *   conditions read points).
 * The whole hours inside the time bounds come from the rollups; the partial hours at either edge
 * (and anything outside the span a zone was checked for) from the points, combined per bucket.
 */

export interface RollupWindow {
  /** Whole hours [from, to), epoch milliseconds; both on hour boundaries, from < to. */
  from: number;
  to: number;
}

const ROLLED_UP = new Set([
  'count(*)',
  'count(value)',
  'mean(value)',
  'min(value)',
  'max(value)',
  'sum(value)',
]);
const rolledUp = (agg: Aggregate) =>
  ROLLED_UP.has(`${agg.fn}(${agg.arg})`) ||
  ((agg.fn === 'first' || agg.fn === 'last') && agg.arg === 'value');

/** The hours of `plan` the rollups can answer, or null: the query runs on points alone. */
export function rollupWindow(plan: Plan): RollupWindow | null {
  if (!plan.aggregated) return null;
  for (const column of plan.columns)
    if (column.source.kind === 'agg' && !rolledUp(column.source.agg)) return null;
  for (const sort of plan.sort) if (sort.source.kind === 'agg' && !rolledUp(sort.source.agg)) return null;
  if (!plan.keys.every(keyFits)) return null;
  const bounds = timeBounds(plan.filter);
  if (!bounds) return null;
  let from = bounds.from === null ? ALL_TIME.from : ceilHour(bounds.from, bounds.fromInclusive);
  let to = bounds.to === null ? ALL_TIME.to : Math.floor(bounds.to / HOUR_MS) * HOUR_MS;
  for (const key of plan.keys) {
    if (key.kind !== 'bucket' || key.timeZone === null) continue;
    const span = wholeHourSpan(key.timeZone);
    from = Math.max(from, span.from);
    to = Math.min(to, span.to);
  }
  return from < to ? { from, to } : null;
}

function keyFits(key: KeyExpr): boolean {
  if (key.kind === 'bucket') return key.width.ms % HOUR_MS === 0;
  return key.kind === 'property' || COLUMNS[key.name].level === 'state';
}

/** First hour boundary whose whole hour lies after the bound (time >= bound, or > when exclusive). */
function ceilHour(bound: number, inclusive: boolean): number {
  const ceil = Math.ceil(bound / HOUR_MS) * HOUR_MS;
  return !inclusive && ceil === bound ? ceil + HOUR_MS : ceil;
}

interface TimeBounds {
  from: number | null;
  fromInclusive: boolean;
  /** Points lie before this (time < to, or time <= to: whole hours end at floor(to) either way). */
  to: number | null;
}

/** The time bounds of a filter made of state conditions and time bounds only; null otherwise. */
export function timeBounds(filter: Filter | null): TimeBounds | null {
  const bounds: TimeBounds = { from: null, fromInclusive: true, to: null };
  if (!filter) return bounds;
  const normal = toNegationNormalForm(filter);
  const items = normal.kind === 'and' ? flattenAnd(normal) : [normal];
  for (const item of items) {
    if (!readsPoints(item)) continue;
    if (item.kind !== 'compare' || item.target.kind !== 'column' || item.target.name !== 'time') return null;
    if (!(item.value instanceof Date)) return null;
    const at = item.value.getTime();
    switch (item.op) {
      case '>=':
      case '>':
        if (bounds.from === null || at > bounds.from || (at === bounds.from && item.op === '>')) {
          bounds.from = at;
          bounds.fromInclusive = item.op === '>=';
        }
        break;
      case '<':
      case '<=':
        bounds.to = bounds.to === null ? at : Math.min(bounds.to, at);
        break;
      default:
        return null;
    }
  }
  return bounds;
}

const flattenAnd = (filter: Filter): Filter[] =>
  filter.kind === 'and' ? filter.items.flatMap(flattenAnd) : [filter];

/** Does the condition look at a point column anywhere inside? */
function readsPoints(filter: Filter): boolean {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return filter.items.some(readsPoints);
    case 'not':
      return readsPoints(filter.operand);
    case 'compare':
    case 'in':
    case 'like':
    case 'isNull':
      return filter.target.kind === 'column' && COLUMNS[filter.target.name].level === 'point';
    default:
      return false;
  }
}

/** The span checked for whole-hour offsets: zone rules after 2100 repeat those before. */
const CHECK_FROM = Date.UTC(1900, 0, 1);
const CHECK_TO = Date.UTC(2100, 0, 1);
const CHECK_STEP = 7 * 24 * HOUR_MS;
const spans = new Map<string, RollupWindow>();

/**
 * From when (to 2100) the zone's UTC offset is a whole number of hours, checked weekly: no zone
 * held an offset for less than a week, so a week after the last fractional sample is safe.
 */
export function wholeHourSpan(zone: string): RollupWindow {
  let span = spans.get(zone);
  if (span) return span;
  let from = CHECK_FROM;
  for (let at = CHECK_TO; at >= CHECK_FROM; at -= CHECK_STEP) {
    if (zoneOffsetMs(zone, at) % HOUR_MS !== 0) {
      from = at + CHECK_STEP;
      break;
    }
  }
  span = { from: Math.ceil(from / HOUR_MS) * HOUR_MS, to: CHECK_TO };
  spans.set(zone, span);
  return span;
}
