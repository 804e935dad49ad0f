import { bucketFor, type TimeWindow } from './chart-range';

/**
 * The one time-series query a chart runs for its window (docs/timeseries-query.md). Both the drawing
 * and "Download CSV" use its text, so the file holds exactly what the chart was drawn from. Times
 * are absolute (not `now() - 5m`): the file must not slide a few seconds past the chart.
 */
export interface ChartQuery extends TimeWindow {
  stateIds: string[];
  /** Null: raw points; else the bucket width (`5m`). */
  bucket: string | null;
  /** The zone day buckets start in (the console's chosen zone); shorter buckets are zone-free. */
  timeZone: string;
}

/** Rows per answer: a few hundred buckets per state, or an hour of raw points at one per second for a dozen states. */
export const ROW_LIMIT = 50_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ZONE = /^[A-Za-z0-9_+\-/]{1,64}$/;

export function chartQuery(stateIds: string[], window: TimeWindow, timeZone: string): ChartQuery {
  return {
    stateIds,
    from: window.from,
    to: window.to,
    bucket: bucketFor(window.to - window.from)?.text ?? null,
    timeZone,
  };
}

/** The query text; ids and the zone are checked, since they become part of the text. */
export function chartQueryText(query: ChartQuery): string {
  if (query.stateIds.length === 0) throw new Error('a chart query needs a state');
  for (const id of query.stateIds) if (!UUID.test(id)) throw new Error(`not a state id: ${id}`);
  const ids = query.stateIds.map((id) => `'${id}'`).join(', ');
  const where =
    `state.id IN (${ids}) AND time >= '${new Date(query.from).toISOString()}' ` +
    `AND time <= '${new Date(query.to).toISOString()}'`;
  const about = 'twin.title AS twin, state.key AS state_key, state.title AS state, state.unit AS unit';
  if (query.bucket === null)
    return `SELECT time, ${about}, value, state.id AS state_id WHERE ${where} ORDER BY time LIMIT ${ROW_LIMIT}`;
  const zoned = query.bucket.endsWith('d') && query.timeZone !== 'UTC' && ZONE.test(query.timeZone);
  const bucket = zoned ? `bucket(${query.bucket}, '${query.timeZone}')` : `bucket(${query.bucket})`;
  return (
    `SELECT ${bucket} AS time, ${about}, mean(value) AS mean, min(value) AS min, max(value) AS max, ` +
    `state.id AS state_id WHERE ${where} ORDER BY time LIMIT ${ROW_LIMIT}`
  );
}

/** A point of one state: raw `[time, value]`, or `[time, mean, min, max]` per bucket. */
export type ChartPoint = [number, number] | [number, number, number, number];

/** The query's answer (JSON) as the chart uses it. */
export interface ChartAnswer {
  columns: { name: string }[];
  rows: unknown[][];
  meta?: { rowCount: number; limit: number };
}

const toNumber = (cell: unknown): number | null =>
  typeof cell === 'number' && Number.isFinite(cell) ? cell : null;

/**
 * The answer's rows per state id, oldest first. Rows without a number (text points, empty buckets)
 * are left out; booleans are already 1/0 in `value`.
 */
export function pointsByState(answer: ChartAnswer): Map<string, ChartPoint[]> {
  const at = (name: string) => answer.columns.findIndex((column) => column.name === name);
  const [time, state, value, mean, min, max] = [
    at('time'),
    at('state_id'),
    at('value'),
    at('mean'),
    at('min'),
    at('max'),
  ];
  const byState = new Map<string, ChartPoint[]>();
  if (time < 0 || state < 0) return byState;
  for (const row of answer.rows) {
    const when = typeof row[time] === 'string' ? Date.parse(row[time]) : NaN;
    const id = row[state];
    if (!Number.isFinite(when) || typeof id !== 'string') continue;
    let point: ChartPoint | null = null;
    if (value >= 0) {
      const number = toNumber(row[value]);
      if (number !== null) point = [when, number];
    } else {
      const [m, lo, hi] = [toNumber(row[mean]), toNumber(row[min]), toNumber(row[max])];
      if (m !== null && lo !== null && hi !== null) point = [when, m, lo, hi];
    }
    if (!point) continue;
    const list = byState.get(id) ?? [];
    list.push(point);
    byState.set(id, list);
  }
  return byState;
}

/** A state value as a chart number: numbers as they are, booleans 1/0, numeric text parsed; else null. */
export function chartNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
    return Number(value);
  return null;
}

/** Whether the answer stopped at its row limit (the chart then says so). */
export const isTruncated = (answer: ChartAnswer) =>
  answer.meta !== undefined && answer.meta.rowCount >= answer.meta.limit;

/**
 * A file name that says what and when: `stellwerk-pump-1-flow-pressure-20261126T1000Z-20261126T1005Z.csv`.
 */
export function csvFileName(title: string, window: TimeWindow): string {
  const slug = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/g, '');
  const stamp = (at: number) => new Date(at).toISOString().slice(0, 16).replace(/[-:]/g, '') + 'Z';
  return `stellwerk-${slug || 'chart'}-${stamp(window.from)}-${stamp(window.to)}.csv`;
}
