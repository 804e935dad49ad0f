import type { TimeSeriesPoint } from '../timeseries.types.js';

/**
 * InfluxDB line protocol for points (InfluxDB 1.x `/write`, InfluxDB 2.x and VictoriaMetrics
 * `/api/v2/write`), millisecond precision. One series per state: measurement + tags
 * `account_id`, `twin_id`, `state_id`, `state_key`; writing the same point again overwrites it
 * (same series and time), which is what makes retried batches idempotent.
 *
 * Fields: numbers (booleans as 1/0) in `value` (always a float, so the field type never
 * conflicts), text in `text`, a point without value `is_null=1`. VictoriaMetrics stores numbers
 * only, so in its flavor a text value travels as the `text` label of an `is_text=1` sample.
 */

export type LineFlavor = 'influxdb' | 'victoria-metrics';

// Tag keys/values and measurements: comma, equals sign and space are escaped; a newline cannot be.
const escapeTag = (value: string) => value.replace(/[\r\n]+/g, ' ').replace(/([,= \\])/g, '\\$1');
const escapeMeasurement = (value: string) => value.replace(/[\r\n]+/g, ' ').replace(/([, \\])/g, '\\$1');
const escapeString = (value: string) => value.replace(/(["\\])/g, '\\$1');

function formatFloat(value: number): string {
  // `1` would be a float too, but `1e+21` is not valid line protocol.
  return Number.isFinite(value) ? String(value).replace('e+', 'e') : '0';
}

export function toLine(point: TimeSeriesPoint, measurement: string, flavor: LineFlavor = 'influxdb'): string {
  // Tags in key order (account_id, state_id, state_key, text, twin_id): the servers' cheapest path.
  const tags = [`account_id=${escapeTag(point.accountId)}`, `state_id=${escapeTag(point.stateId)}`];
  if (point.stateKey !== '') tags.push(`state_key=${escapeTag(point.stateKey)}`);
  let fields: string;
  if (point.value !== null && Number.isFinite(point.value)) fields = `value=${formatFloat(point.value)}`;
  else if (point.text !== null && flavor === 'victoria-metrics') {
    // An empty label is no label: a missing `text` label reads back as the empty text.
    if (point.text !== '') tags.push(`text=${escapeTag(point.text)}`);
    fields = 'is_text=1';
  } else if (point.text !== null) fields = `text="${escapeString(point.text)}"`;
  else fields = 'is_null=1';
  tags.push(`twin_id=${escapeTag(point.twinId)}`);
  return `${escapeMeasurement(measurement)},${tags.join(',')} ${fields} ${point.time.getTime()}`;
}

export function toLines(points: TimeSeriesPoint[], measurement: string, flavor?: LineFlavor): string[] {
  return points.map((p) => toLine(p, measurement, flavor));
}

/** Same state and millisecond = one point (the external targets overwrite; keep the last one read). */
export function dedupeByStateAndTime(points: TimeSeriesPoint[]): TimeSeriesPoint[] {
  const byKey = new Map<string, TimeSeriesPoint>();
  for (const point of points) byKey.set(`${point.stateId}@${point.time.getTime()}`, point);
  return [...byKey.values()].sort(
    (a, b) => a.time.getTime() - b.time.getTime() || a.stateId.localeCompare(b.stateId),
  );
}
