import type pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import type { Lifecycle } from '../platform/lifecycle.js';
import type { Metrics } from '../platform/metrics.js';
import { TargetWriter, type TargetWriterOptions } from './target-writer.js';
import type { TimeSeriesTarget } from './timeseries.types.js';

export interface OutboxWriterOptions {
  databaseUrl: string;
  pool: pg.Pool;
  /** Every configured target; the postgres one is written in the state transaction, not from here. */
  targets: TimeSeriesTarget[];
  log: FastifyBaseLogger;
  metrics: Metrics;
  /** How often outbox rows every target has passed are deleted. */
  cleanupMs?: number;
  writer?: Pick<TargetWriterOptions, 'pollMs' | 'backoffMs' | 'standbyMs' | 'reader'>;
}

export interface TargetBacklog {
  target: string;
  /** Outbox position of the target (0 before its first batch). */
  cursor: number;
  rows: number;
  points: number;
}

const CLEANUP_CHUNK = 5000;

/**
 * The time-series writer: one TargetWriter per configured external target (target-writer.ts), plus
 * the background deletion of outbox rows below every external target's cursor. A target without a
 * cursor row counts as position 0, so a newly added target keeps the whole outbox until it has
 * caught up. Every node runs the cleanup (idempotent deletes); all nodes must list the same targets.
 * With no external target the outbox receives nothing, and whatever is left in it goes.
 * (The postgres target's outbox backlog of older versions moved into `ts_points` by a migration.)
 */
export class OutboxWriter implements Lifecycle {
  readonly name = 'timeseries-writer';
  readonly writers: TargetWriter[];
  private readonly external: TimeSeriesTarget[];
  private cleanupTimer: NodeJS.Timeout | undefined;
  private cleanupInFlight: Promise<void> | undefined;

  constructor(private readonly options: OutboxWriterOptions) {
    const written = options.metrics.counter(
      'stellwerk_timeseries_points_written_total',
      'Points delivered to each time-series target',
      ['target'],
    );
    const failures = options.metrics.counter(
      'stellwerk_timeseries_write_failures_total',
      'Failed deliveries to each time-series target (each is retried from the outbox)',
      ['target'],
    );
    this.external = options.targets.filter((t) => t.kind !== 'postgres');
    this.writers = this.external.map(
      (target) =>
        new TargetWriter(target, {
          databaseUrl: options.databaseUrl,
          pool: options.pool,
          log: options.log,
          onWritten: (name, points) => written.inc({ target: name }, points),
          onFailure: (name) => failures.inc({ target: name }),
          ...options.writer,
        }),
    );
    const backlogGauge = (field: 'rows' | 'points', help: string) =>
      options.metrics.gauge(`stellwerk_timeseries_backlog_${field}`, help, ['target'], async (gauge) => {
        try {
          for (const b of await this.backlog()) gauge.set({ target: b.target }, b[field]);
        } catch {
          // Database unreachable during a scrape: keep the last figures.
        }
      });
    backlogGauge('rows', 'Outbox rows (committed batches) each target has not received yet');
    backlogGauge('points', 'Points each target has not received yet');
  }

  async start(): Promise<void> {
    for (const writer of this.writers) writer.start();
    this.cleanupTimer = setInterval(() => void this.cleanup(), this.options.cleanupMs ?? 10_000);
    this.cleanupTimer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.cleanupTimer);
    await Promise.all(this.writers.map((w) => w.stop()));
    await this.cleanupInFlight;
  }

  /** Wakes every writer now (the state engine just appended points; saves the poll wait). */
  poke(): void {
    for (const writer of this.writers) writer.poke();
  }

  /** Per target: what it has not received yet. */
  async backlog(): Promise<TargetBacklog[]> {
    const { rows } = await this.options.pool.query<{
      target: string;
      cursor: string;
      rows: string;
      points: string;
    }>(
      `SELECT t.name AS target, coalesce(c.outbox_id, 0) AS cursor,
              (SELECT count(*) FROM ts_outbox o WHERE o.id > coalesce(c.outbox_id, 0)) AS rows,
              (SELECT coalesce(sum(o.count), 0) FROM ts_outbox o WHERE o.id > coalesce(c.outbox_id, 0)) AS points
         FROM unnest($1::text[]) AS t(name) LEFT JOIN ts_target_cursors c ON c.target = t.name`,
      [this.external.map((t) => t.name)],
    );
    return rows.map((r) => ({
      target: r.target,
      cursor: Number(r.cursor),
      rows: Number(r.rows),
      points: Number(r.points),
    }));
  }

  /** Deletes outbox rows every configured target has passed; failures are logged, the next run retries. */
  cleanup(): Promise<void> {
    this.cleanupInFlight ??= (async () => {
      // No external target: every row can go (the max over an empty list would keep them all).
      const { rows } = await this.options.pool.query<{ below: string }>(
        this.external.length === 0
          ? 'SELECT coalesce(max(id), 0) AS below FROM ts_outbox'
          : `SELECT coalesce(min(coalesce(c.outbox_id, 0)), 0) AS below
               FROM unnest($1::text[]) AS t(name) LEFT JOIN ts_target_cursors c ON c.target = t.name`,
        this.external.length === 0 ? [] : [this.external.map((t) => t.name)],
      );
      const below = Number(rows[0]?.below ?? 0);
      // Bounded chunks: a large drained backlog is removed without one long transaction.
      for (;;) {
        const deleted = await this.options.pool.query(
          'DELETE FROM ts_outbox WHERE id IN (SELECT id FROM ts_outbox WHERE id <= $1 ORDER BY id LIMIT $2)',
          [below, CLEANUP_CHUNK],
        );
        if ((deleted.rowCount ?? 0) < CLEANUP_CHUNK) break;
      }
    })()
      .catch((error: unknown) => this.options.log.warn({ err: error }, 'time-series outbox cleanup failed'))
      .finally(() => {
        this.cleanupInFlight = undefined;
      });
    return this.cleanupInFlight;
  }
}
