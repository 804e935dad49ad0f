/** The ranges the state chart offers, and the time-series query each one runs (docs/timeseries-query.md). */
export type HistoryRange = '1h' | '6h' | '24h' | '7d' | '30d' | '90d';
export const HISTORY_RANGES: HistoryRange[] = ['1h', '6h', '24h', '7d', '30d', '90d'];

/** Raw points up to a day; longer ranges ask for means per bucket, so a chart never holds more than a few thousand points. */
const BUCKETS: Partial<Record<HistoryRange, string>> = { '7d': '15m', '30d': '1h', '90d': '6h' };
export const POINT_LIMIT = 5000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The query text for one state over `range`; the id is checked, since it becomes part of the text. */
export function historyQuery(stateId: string, range: HistoryRange): string {
  if (!UUID.test(stateId)) throw new Error(`not a state id: ${stateId}`);
  const bucket = BUCKETS[range];
  const where = `state.id = '${stateId}' AND time >= now() - ${range}`;
  return bucket
    ? `SELECT bucket(${bucket}) AS t, mean(value) AS v WHERE ${where} GROUP BY t ORDER BY t LIMIT ${POINT_LIMIT}`
    : `SELECT time, value WHERE ${where} ORDER BY time LIMIT ${POINT_LIMIT}`;
}

/** Whether `range` shows bucket means (live values are then not appended point by point). */
export const isBucketed = (range: HistoryRange) => BUCKETS[range] !== undefined;

export const RANGE_MS: Record<HistoryRange, number> = {
  '1h': 3_600_000,
  '6h': 6 * 3_600_000,
  '24h': 24 * 3_600_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
  '90d': 90 * 86_400_000,
};

/** A state value as a chart number: numbers as they are, booleans 1/0, numeric text parsed; else null. */
export function chartNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
    return Number(value);
  return null;
}

/** Rows of the query answer as `[epoch ms, number]` pairs, skipping NULL buckets. */
export function toSeries(rows: unknown[][]): [number, number][] {
  const series: [number, number][] = [];
  for (const [time, value] of rows) {
    const number = chartNumber(value);
    if (typeof time === 'string' && number !== null) series.push([Date.parse(time), number]);
  }
  return series;
}
