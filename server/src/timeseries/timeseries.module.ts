import pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import type { Lifecycle } from '../platform/lifecycle.js';
import { pgPoolUsage, trackPool } from '../platform/db/pool-metrics.js';
import type { Metrics } from '../platform/metrics.js';
import { OutboxWriter, type OutboxWriterOptions } from './outbox-writer.js';
import { TimeSeriesSqlReader } from './query/query.sql-reader.js';
import { PartitionMaintenance } from './partitions.js';
import { pointRouting, TransactionalPointSink } from './point-sink.js';
import { RetentionJob } from './retention.js';
import { createRollupFold } from './rollup-fold.js';
import { createTarget } from './targets/create-target.js';
import type { TimeSeriesTargetSpec } from './timeseries-targets.config.js';
import { TimeSeriesStore, type TimeSeriesStoreOptions } from './timeseries.store.js';

export interface TimeSeriesModuleOptions {
  databaseUrl: string;
  targets: TimeSeriesTargetSpec[];
  metrics: Metrics;
  log: FastifyBaseLogger;
  clock: () => Date;
  /** Tuning for tests and the bench; production uses the defaults. */
  writer?: OutboxWriterOptions['writer'];
  cleanupMs?: number;
  store?: TimeSeriesStoreOptions;
}

/**
 * Everything of the time-series storage, built once per server (services.ts):
 * - `sink`: stores points inside the caller's transaction (state engine, API; point-sink.ts);
 * - `store`: reads (serving target with failover) for the query endpoint;
 * - `reader`: the query endpoint's SQL when PostgreSQL serves reads (query/query.sql-reader.ts);
 * - `writer`, `partitions`, `retention`, `rollupFold`: the background parts, started together by `runtime`.
 * The module's pool serves the postgres target, the outbox and the maintenance; it is closed
 * when the runtime stops.
 */
export function createTimeSeries(options: TimeSeriesModuleOptions) {
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: 4 + options.targets.length,
    application_name: 'stellwerk-timeseries',
  });
  // An idle connection dropped by the server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  trackPool(options.metrics, 'timeseries', pgPoolUsage(pool));
  const targets = options.targets.map((spec) => createTarget(spec, pool));
  const sink = new TransactionalPointSink(pointRouting(options.targets));
  const store = new TimeSeriesStore(targets, pool, options.store);
  // The query endpoint's statements, on connections of their own (read-only, with the timeout).
  const reader = new TimeSeriesSqlReader({ databaseUrl: options.databaseUrl });
  trackPool(options.metrics, 'timeseries-query-prepared', pgPoolUsage(reader.pools.generic));
  trackPool(options.metrics, 'timeseries-query', pgPoolUsage(reader.pools.custom));
  const writer = new OutboxWriter({
    databaseUrl: options.databaseUrl,
    pool,
    targets,
    log: options.log,
    metrics: options.metrics,
    ...(options.cleanupMs !== undefined ? { cleanupMs: options.cleanupMs } : {}),
    ...(options.writer ? { writer: options.writer } : {}),
  });
  const partitions = new PartitionMaintenance({ pool, log: options.log, clock: options.clock });
  const retention = new RetentionJob({
    databaseUrl: options.databaseUrl,
    pool,
    log: options.log,
    clock: options.clock,
  });
  // The wall clock, as the write path's late-point check uses: the two must agree (ADR 0122).
  const rollupFold = createRollupFold({ databaseUrl: options.databaseUrl, pool, log: options.log });
  const parts: Lifecycle[] = [partitions, writer, retention, rollupFold];
  const runtime: Lifecycle = {
    name: 'timeseries',
    start: async () => {
      for (const part of parts) await part.start();
    },
    stop: async () => {
      for (const part of [...parts].reverse()) await part.stop();
      await Promise.all(targets.map((t) => t.close()));
      await Promise.all([pool.end(), reader.close()]);
    },
  };
  return { pool, targets, sink, store, reader, writer, partitions, retention, rollupFold, runtime };
}

export type TimeSeries = ReturnType<typeof createTimeSeries>;
