import type pg from 'pg';
import { isUuid } from '../../platform/crypto/ids.js';
import { markLateHours } from '../rollups.js';
import type { PointFilter, TimeSeriesPoint, TimeSeriesTarget } from '../timeseries.types.js';

/** Anything that runs a query: the pool, or a client inside the writer's transaction. */
export interface Queryable {
  query: pg.Pool['query'];
}

/**
 * The default target: `ts_points` in the server's own PostgreSQL, range-partitioned by month
 * (partitions.ts), indexed on (state_id, time). Inserts are `unnest` arrays through a prepared
 * statement (ARCHITECTURE.md section 8: the fastest simple path for streaming batches). Points reach
 * it inside the transaction that changed their states (timeseries/point-sink.ts, ADR 0111), so every
 * point lands exactly once and never through the outbox; `write` exists for the interface and tools.
 */
export class PostgresTarget implements TimeSeriesTarget {
  readonly kind = 'postgres' as const;

  constructor(
    readonly name: string,
    private readonly pool: pg.Pool,
    private readonly rowsPerStatement = ROWS_PER_STATEMENT,
  ) {}

  /** One transaction, so the marks of late points commit with them. */
  async write(points: TimeSeriesPoint[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await this.insert(client, points);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async insert(db: Queryable, points: TimeSeriesPoint[]): Promise<void> {
    await insertPoints(db, points, this.rowsPerStatement);
  }

  async readPoints(filter: PointFilter): Promise<TimeSeriesPoint[]> {
    // Not a UUID → no such state; keeps a malformed id from becoming a database error.
    const stateIds = filter.stateIds.filter(isUuid);
    if (stateIds.length === 0) return [];
    const result = await this.pool.query<{
      state_id: string;
      twin_id: string;
      account_id: string;
      key: string;
      time: Date;
      value: number | null;
      text: string | null;
    }>({
      name: 'ts_points_read_range',
      text:
        'SELECT p.state_id, s.twin_id, s.account_id, s.key, p."time", p.value, p.text ' +
        'FROM ts_points p JOIN data_states s ON s.id = p.state_id ' +
        'WHERE p.state_id = ANY($1::uuid[]) AND p."time" >= $2 AND p."time" < $3 ' +
        'ORDER BY p."time", p.state_id LIMIT $4',
      values: [stateIds, filter.from, filter.to, filter.limit ?? null],
    });
    return result.rows.map((r) => ({
      accountId: r.account_id,
      twinId: r.twin_id,
      stateId: r.state_id,
      stateKey: r.key,
      time: r.time,
      value: r.value,
      text: r.text,
    }));
  }

  async health(): Promise<boolean> {
    try {
      await this.pool.query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }

  /** The pool belongs to the time-series module, which closes it. */
  async close(): Promise<void> {}
}

/** Rows per INSERT statement by default: large statements amortise the round trip, bounded for memory. */
const ROWS_PER_STATEMENT = 10_000;

/**
 * Inserts points into `ts_points` on `db` (a client inside the caller's transaction, or the pool):
 * column arrays through `unnest`, a prepared statement, no object per row on the server. Late
 * points mark their hours for the rollup fold after each statement; on a client inside a
 * transaction the marks commit with the points (on the pool, a crash between would lose them).
 */
export async function insertPoints(
  db: Queryable,
  points: TimeSeriesPoint[],
  rowsPerStatement = ROWS_PER_STATEMENT,
  now: number = Date.now(),
): Promise<void> {
  for (let start = 0; start < points.length; start += rowsPerStatement) {
    const end = Math.min(points.length, start + rowsPerStatement);
    const stateIds = new Array<string>(end - start);
    const times = new Array<number>(end - start);
    const values = new Array<number | null>(end - start);
    const texts = new Array<string | null>(end - start);
    for (let i = start; i < end; i++) {
      const point = points[i]!;
      stateIds[i - start] = point.stateId;
      times[i - start] = point.time.getTime();
      values[i - start] = point.value;
      texts[i - start] = point.text;
    }
    await db.query({
      name: 'ts_points_insert_unnest',
      // Times travel as epoch milliseconds: a number array parses faster than timestamp text.
      text:
        'INSERT INTO ts_points (state_id, "time", value, text) ' +
        'SELECT s, to_timestamp(t / 1000), v, x FROM unnest($1::uuid[], $2::float8[], $3::float8[], $4::text[]) AS u(s, t, v, x)',
      values: [stateIds, times, values, texts],
    });
    await markLateHours(db, points.slice(start, end), now);
  }
}
