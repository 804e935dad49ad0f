import type { PointClient, PointSink, TimeSeriesPoint } from './timeseries.types.js';

/**
 * The durable spool between the state engine and the time-series targets: each committed change
 * batch appends one `ts_outbox` row holding all its points, in the same transaction as the state
 * values. Every target reads the outbox after its own cursor (`ts_target_cursors`), so a target that
 * is down keeps its backlog here until it returns; rows every target has passed are deleted.
 *
 * Row encoding: JSON array of `[stateId, twinId, accountId, stateKey, timeMs, value, text]`, stored as
 * bytea (no jsonb parsing on the hot path; only the writer decodes it).
 */

type Row = [string, string, string, string, number, number | null, string | null];

export function encodePoints(points: TimeSeriesPoint[]): Buffer {
  const rows: Row[] = points.map((p) => [
    p.stateId,
    p.twinId,
    p.accountId,
    p.stateKey,
    p.time.getTime(),
    p.value,
    p.text,
  ]);
  return Buffer.from(JSON.stringify(rows));
}

export function decodePoints(bytes: Buffer): TimeSeriesPoint[] {
  const rows = JSON.parse(bytes.toString('utf8')) as Row[];
  return rows.map(([stateId, twinId, accountId, stateKey, time, value, text]) => ({
    stateId,
    twinId,
    accountId,
    stateKey,
    time: new Date(time),
    value,
    text,
  }));
}

const APPEND_SQL = 'INSERT INTO ts_outbox (points, count) VALUES ($1, $2)';

export class OutboxSink implements PointSink {
  async append(client: PointClient, points: TimeSeriesPoint[]): Promise<void> {
    if (points.length === 0) return;
    await client.query(APPEND_SQL, [encodePoints(points), points.length]);
  }
}
