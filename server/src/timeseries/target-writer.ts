import type pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import { ClusterLock, lockKey } from './cluster-lock.js';
import { OutboxReader, type OutboxBatch, type OutboxReaderOptions } from './outbox-reader.js';
import type { TimeSeriesTarget } from './timeseries.types.js';

export interface TargetWriterOptions {
  databaseUrl: string;
  pool: pg.Pool;
  log: FastifyBaseLogger;
  /** Called after each delivered batch and each failure (metrics). */
  onWritten?: (target: string, points: number) => void;
  onFailure?: (target: string) => void;
  /** Wait between polls of an empty outbox. */
  pollMs?: number;
  /** Waits after consecutive failures; the last one repeats while the target stays down. */
  backoffMs?: number[];
  /** How often a node that does not hold the target's lock tries to take it. */
  standbyMs?: number;
  reader?: OutboxReaderOptions;
}

const DEFAULT_BACKOFF_MS = [100, 250, 500, 1000, 2000, 5000, 10_000];

/**
 * Delivers the outbox to one external target (the server's own PostgreSQL gets its points in the
 * transaction that made them, ADR 0111), in outbox order, batch after batch:
 * - write, then advance the cursor — at least once; a crash in between rewrites the batch, which
 *   the target overwrites (same series and time).
 * - a failing target: the same batch is retried with backoff; its backlog stays in the outbox
 *   (the durable spool) and drains when it returns. Other targets' writers are not affected.
 * - one writer per target cluster-wide: the loop runs only while this node holds the target's
 *   advisory lock (other nodes stand by and take over when its session ends).
 */
export class TargetWriter {
  private readonly lock: ClusterLock;
  private readonly reader: OutboxReader;
  private cursor: number | undefined;
  private prefetch: { after: number; batch: Promise<OutboxBatch | undefined> } | undefined;
  private failures = 0;
  private stopped = true;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** Outcome of the last delivery attempt (health reporting; undefined before the first). */
  lastError: Error | undefined;

  constructor(
    readonly target: TimeSeriesTarget,
    private readonly options: TargetWriterOptions,
  ) {
    this.lock = new ClusterLock(options.databaseUrl, lockKey(`writer:${target.name}`));
    this.reader = new OutboxReader(options.pool, options.reader);
  }

  get position(): number | undefined {
    return this.cursor;
  }

  get active(): boolean {
    return this.lock.held;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    await this.lock.release();
  }

  /** Ends a poll wait early (new outbox rows were appended in this process). */
  poke(): void {
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (!(await this.lock.tryAcquire())) {
          this.cursor = undefined;
          await this.sleep(this.options.standbyMs ?? 5000);
          continue;
        }
        this.cursor ??= await this.loadCursor();
        const prefetched = this.prefetch?.after === this.cursor ? this.prefetch.batch : undefined;
        this.prefetch = undefined;
        const batch = await (prefetched ?? this.reader.next(this.cursor));
        if (!batch) {
          await this.sleep(this.options.pollMs ?? 100);
          continue;
        }
        // Read and decode the next batch while this one is written (used only if this one lands).
        this.prefetch = { after: batch.toId, batch: this.reader.next(batch.toId) };
        this.prefetch.batch.catch(() => undefined);
        await this.deliver(batch);
        if (this.failures > 0)
          this.options.log.info({ target: this.target.name }, 'time-series target is back');
        this.failures = 0;
        this.lastError = undefined;
      } catch (error) {
        this.failures++;
        this.lastError = error instanceof Error ? error : new Error(String(error));
        this.options.onFailure?.(this.target.name);
        // The first failure and then every tenth: a target down for hours must not flood the log.
        if (this.failures === 1 || this.failures % 10 === 0) {
          this.options.log.warn(
            { target: this.target.name, failures: this.failures, err: error },
            'time-series target write failed; its backlog stays in the outbox',
          );
        }
        const backoff = this.options.backoffMs ?? DEFAULT_BACKOFF_MS;
        await this.sleep(backoff[Math.min(this.failures, backoff.length) - 1] ?? 1000);
      }
    }
  }

  private async deliver(batch: OutboxBatch): Promise<void> {
    await this.target.write(batch.points);
    await this.options.pool.query(
      'INSERT INTO ts_target_cursors (target, outbox_id, updated_at) VALUES ($1, $2, now()) ' +
        'ON CONFLICT (target) DO UPDATE SET outbox_id = GREATEST(ts_target_cursors.outbox_id, EXCLUDED.outbox_id), updated_at = now()',
      [this.target.name, batch.toId],
    );
    this.cursor = batch.toId;
    this.options.onWritten?.(this.target.name, batch.tuples.length);
  }

  private async loadCursor(): Promise<number> {
    const { rows } = await this.options.pool.query<{ outbox_id: string }>(
      'SELECT outbox_id FROM ts_target_cursors WHERE target = $1',
      [this.target.name],
    );
    return rows[0] ? Number(rows[0].outbox_id) : 0;
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
