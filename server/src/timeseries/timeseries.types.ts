import type pg from 'pg';

/**
 * The time-series contract (ARCHITECTURE.md section 5). Every state value change becomes a point,
 * stored in the transaction that changed the state: as a `ts_points` row for the server's own
 * PostgreSQL, and in a durable outbox (`ts_outbox`) for external targets, each with its own cursor,
 * so a target that is down catches up when it returns and none loses a point (ADR 0101, 0111).
 */

/** One value of one data state at one time. Booleans are stored as 1/0, strings in `text`. */
export interface TimeSeriesPoint {
  accountId: string;
  twinId: string;
  stateId: string;
  stateKey: string;
  time: Date;
  /** Numeric value (booleans 1/0); null for text values. */
  value: number | null;
  /** Text value (strings, JSON of objects); null for numeric values. */
  text: string | null;
}

/** Which points to read back: raw points of the given states in [from, to). */
export interface PointFilter {
  stateIds: string[];
  from: Date;
  to: Date;
  /** At most this many points, oldest first. */
  limit?: number;
}

/**
 * A database that stores points. Implementations: PostgreSQL (default, partitioned `ts_points`),
 * InfluxDB 1.x (v1 `/write` and `/query`), InfluxDB 2.x / VictoriaMetrics (v2 write API).
 */
export interface TimeSeriesTarget {
  /** Configured name, unique among targets (`postgres`, `influx-site` …): the outbox cursor key. */
  readonly name: string;
  readonly kind: 'postgres' | 'influxdb-v1' | 'influxdb-v2';
  /** Stores every point or throws (the writer retries the same batch later: writes must be idempotent). */
  write(points: TimeSeriesPoint[]): Promise<void>;
  /** Raw points, oldest first. */
  readPoints(filter: PointFilter): Promise<TimeSeriesPoint[]>;
  /** True when the target answers now (used to choose who serves reads). */
  health(): Promise<boolean>;
  close(): Promise<void>;
}

/** Stores points inside the caller's transaction (state engine: ingest batches, API and timer writes). */
export interface PointSink {
  /** `client` is a pg client inside an open transaction; the points commit or roll back with it. */
  append(client: PointClient, points: TimeSeriesPoint[]): Promise<void>;
}

/** A pg client (or pool): `query` with text and parameters, or a named (prepared) query config. */
export interface PointClient {
  query: pg.Pool['query'];
}

/**
 * Who serves reads (the store in timeseries/ implements it): the primary target while it is
 * healthy, else the first healthy secondary. The query endpoint pushes a query down as SQL when the
 * serving target is PostgreSQL and otherwise evaluates it over `readPoints` of the serving target.
 */
export interface TimeSeriesReads {
  servingTarget(): Promise<TimeSeriesTarget>;
  /** Raw points from the serving target, failing over to the next healthy target if it fails. */
  readPoints(filter: PointFilter): Promise<TimeSeriesPoint[]>;
  /** As readPoints, naming the target that answered (after a failover: not the one `servingTarget` named). */
  readPointsWithSource?(filter: PointFilter): Promise<{ target: string; points: TimeSeriesPoint[] }>;
}
