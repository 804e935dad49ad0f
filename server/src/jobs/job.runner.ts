import { RequestContext, type MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { Lifecycle } from '../platform/lifecycle.js';
import { safeErrorMessage } from '../platform/db/database-errors.js';
import type { Counter } from 'prom-client';
import type { Metrics } from '../platform/metrics.js';
import { Job } from './job.entity.js';
import { MAX_JOB_ERRORS, type JobHandler, type JobItemError, type JobRunContext } from './job.types.js';

const POLL_MS = 1000;
const HOUSEKEEPING_MS = 60 * 60 * 1000;
const PROGRESS_EVERY_MS = 500;

// Oldest first; SKIP LOCKED lets several nodes claim from one queue without waiting on each other.
const CLAIM_SQL = `
  UPDATE jobs SET status = 'running', node_id = ?, started_at = now(), updated_at = now()
   WHERE id IN (SELECT id FROM jobs WHERE status = 'queued' ORDER BY created_at, id LIMIT ? FOR UPDATE SKIP LOCKED)
  RETURNING id`;

// A running job whose node is stopped or silent will never finish there: requeue the idempotent
// kinds, fail the rest. Our own node's jobs are in memory and excluded.
const RECOVER_SQL = `
  UPDATE jobs SET
     status = CASE WHEN type IN (?) THEN 'queued' ELSE 'failed' END,
     finished_at = CASE WHEN type IN (?) THEN NULL ELSE now() END,
     node_id = NULL, updated_at = now(),
     errors = CASE WHEN type IN (?) THEN errors
                   ELSE errors || jsonb_build_array(jsonb_build_object('code', 'JOB_NODE_LOST',
                        'message', 'The server node running this job stopped before it finished')) END
   WHERE status = 'running' AND node_id IS DISTINCT FROM ?
     AND NOT EXISTS (SELECT 1 FROM server_nodes n WHERE n.id = jobs.node_id AND n.stopped_at IS NULL
                        AND n.last_heartbeat > now() - make_interval(secs => ?))
  RETURNING id`;

// The queue as every node sees it: each node's scrape reports the same cluster-wide numbers.
const QUEUE_SQL = `SELECT status, count(*)::int AS count FROM jobs WHERE status IN ('queued', 'running') GROUP BY status`;

const PROGRESS_SQL = `UPDATE jobs SET total = ?, progress = ?, succeeded = ?, failed = ?, errors = ?::jsonb, updated_at = now() WHERE id = ?`;

const FINISH_SQL = `
  UPDATE jobs SET status = ?, total = ?, progress = ?, succeeded = ?, failed = ?, errors = ?::jsonb,
         result = ?::jsonb, finished_at = now(), updated_at = now()
   WHERE id = ?`;

/** Finished and failed jobs are kept three months (spec, Limits). */
const HOUSEKEEPING_SQL = `DELETE FROM jobs WHERE status IN ('finished', 'failed') AND created_at < now() - interval '3 months'`;

// An ended job's attachment is of no use; deleted at its end, here for jobs ended by recovery.
const ATTACHMENTS_HOUSEKEEPING_SQL = `DELETE FROM job_attachments a USING jobs j WHERE a.job_id = j.id AND j.status IN ('finished', 'failed')`;
const ATTACHMENT_PIECE_SQL = 'SELECT content FROM job_attachments WHERE job_id = ? AND seq = ?';
const ATTACHMENT_DELETE_SQL = 'DELETE FROM job_attachments WHERE job_id = ?';

export interface JobRunnerOptions {
  orm: MikroORM;
  log: FastifyBaseLogger;
  nodeId: string;
  maxConcurrent: number;
  /** A node silent this long is taken as dead (same rule as the health check). */
  nodeFaultyAfterMs: number;
  /** Reports the queue (`stellwerk_jobs`) and ended jobs (`stellwerk_jobs_ended_total`). */
  metrics?: Metrics;
}

/**
 * Runs background jobs from the `jobs` table. Claims with `FOR UPDATE SKIP LOCKED`, at most
 * `maxConcurrent` at a time on this node. Every claimed job ends `finished` or `failed`: handler
 * errors fail the job, and jobs of dead nodes are recovered at start and on every poll.
 * Tests that do not start the lifecycle call `runOnce()` to drain the queue.
 */
export class JobRunner implements Lifecycle {
  readonly name = 'jobs';
  private readonly handlers = new Map<string, JobHandler>();
  private readonly active = new Set<Promise<void>>();
  private pollTimer: NodeJS.Timeout | undefined;
  private housekeepingTimer: NodeJS.Timeout | undefined;
  private running = false;
  private ticking: Promise<void> | undefined;
  private readonly ended: Counter<'type' | 'status'> | undefined;

  constructor(private readonly options: JobRunnerOptions) {
    const { metrics } = options;
    if (!metrics) return;
    this.ended = metrics.counter('stellwerk_jobs_ended_total', 'Background jobs ended on this node', [
      'type',
      'status',
    ]);
    metrics.gauge(
      'stellwerk_jobs',
      'Background jobs queued or running on any node, as stored in PostgreSQL',
      ['status'],
      async (gauge) => {
        gauge.reset();
        try {
          const rows = await this.sql<Array<{ status: string; count: number }>>(QUEUE_SQL, []);
          const counts = new Map(rows.map((row) => [row.status, row.count]));
          for (const status of ['queued', 'running']) gauge.set({ status }, counts.get(status) ?? 0);
        } catch {
          // Database unreachable: no sample rather than a failed scrape (stellwerk_nodes says why).
        }
      },
    );
  }

  register(handler: JobHandler): void {
    this.handlers.set(handler.type, handler);
  }

  async start(): Promise<void> {
    this.running = true;
    await this.recover();
    await this.housekeeping();
    this.pollTimer = setInterval(() => this.wake(), POLL_MS);
    this.pollTimer.unref();
    this.housekeepingTimer = setInterval(
      () =>
        void this.housekeeping().catch((e: unknown) =>
          this.options.log.warn({ err: e }, 'job housekeeping failed'),
        ),
      HOUSEKEEPING_MS,
    );
    this.housekeepingTimer.unref();
    this.wake();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.pollTimer);
    clearInterval(this.housekeepingTimer);
    await this.ticking;
    await Promise.allSettled([...this.active]);
  }

  /** Looks for work now (after an enqueue) instead of at the next poll; no-op unless started. */
  wake(): void {
    if (!this.running || this.ticking) return;
    this.ticking = this.claimAndStart()
      .then(() => undefined)
      .catch((error: unknown) => this.options.log.warn({ err: error }, 'job claim failed'))
      .finally(() => {
        this.ticking = undefined;
      });
  }

  /** Runs queued jobs until the queue is empty; resolves with how many ran. */
  async runOnce(): Promise<number> {
    let count = 0;
    for (;;) {
      const started = await this.claimAndStart();
      count += started;
      if (started === 0 && this.active.size === 0) return count;
      await Promise.race(this.active);
    }
  }

  /** Fails or requeues running jobs whose node is gone; returns their ids. */
  async recover(): Promise<string[]> {
    // '' never names a job type; it keeps the IN list non-empty.
    const retryable = ['', ...[...this.handlers.values()].filter((h) => h.retryable).map((h) => h.type)];
    const rows = await this.sql<Array<{ id: string }>>(RECOVER_SQL, [
      retryable,
      retryable,
      retryable,
      this.options.nodeId,
      this.options.nodeFaultyAfterMs / 1000,
    ]);
    if (rows.length > 0)
      this.options.log.warn({ jobs: rows.map((r) => r.id) }, 'recovered jobs of lost nodes');
    return rows.map((r) => r.id);
  }

  async housekeeping(): Promise<number> {
    await this.sql(ATTACHMENTS_HOUSEKEEPING_SQL, [], 'run');
    const result = await this.options.orm.em.getConnection().execute(HOUSEKEEPING_SQL, [], 'run');
    return (result as { affectedRows?: number }).affectedRows ?? 0;
  }

  private async claimAndStart(): Promise<number> {
    const free = this.options.maxConcurrent - this.active.size;
    if (free <= 0) return 0;
    const rows = await this.sql<Array<{ id: string }>>(CLAIM_SQL, [this.options.nodeId, free]);
    for (const { id } of rows) {
      const done: Promise<void> = this.execute(id).finally(() => {
        this.active.delete(done);
        // A slot came free: take the next job now rather than at the next poll.
        if (this.running) this.wake();
      });
      this.active.add(done);
    }
    return rows.length;
  }

  private execute(id: string): Promise<void> {
    const em = this.options.orm.em.fork();
    return RequestContext.create(em, async () => {
      const job = await em.findOneOrFail(Job, { id });
      const state = new JobState(job);
      const handler = this.handlers.get(job.type);
      let status: 'finished' | 'failed' = 'finished';
      let result: Record<string, unknown> = {};
      try {
        if (!handler) throw new Error(`no handler for job type "${job.type}"`);
        const ctx = this.context(job, em, state);
        result = (await handler.run(ctx)) ?? {};
      } catch (error) {
        status = 'failed';
        // The job's errors are shown to its account: a database error's own text carries SQL.
        state.error({ code: 'JOB_FAILED', message: safeErrorMessage(error) });
        this.options.log.warn({ err: error, job: id, type: job.type }, 'job failed');
      }
      await this.writeFinal(id, status, state, result);
      this.ended?.inc({ type: job.type, status });
      await this.sql(ATTACHMENT_DELETE_SQL, [id], 'run').catch((error: unknown) =>
        this.options.log.warn({ err: error, job: id }, 'could not delete the attachment of a job'),
      );
    });
  }

  private context(job: Job, em: JobRunContext['em'], state: JobState): JobRunContext {
    const sql = this.sql.bind(this);
    let lastWrite = 0;
    const flush = async () => {
      lastWrite = Date.now();
      await this.sql(PROGRESS_SQL, [...state.counters(), JSON.stringify(state.errors), job.id], 'run');
    };
    return {
      job,
      em,
      setTotal: (total) => {
        state.total = total;
      },
      advance: (succeeded, failed = 0) => {
        state.succeeded += succeeded;
        state.failed += failed;
        if (Date.now() - lastWrite > PROGRESS_EVERY_MS) void flush().catch(() => undefined);
      },
      error: (error) => state.error(error),
      flush,
      attachment: async function* (this: void) {
        for (let seq = 0; ; seq++) {
          const [piece] = await sql<Array<{ content: string }>>(ATTACHMENT_PIECE_SQL, [job.id, seq]);
          if (!piece) return;
          yield piece.content;
        }
      },
    };
  }

  /** The final write is retried: a job left `running` by a transient database error would look stuck. */
  private async writeFinal(id: string, status: string, state: JobState, result: Record<string, unknown>) {
    const params = [status, ...state.counters(), JSON.stringify(state.errors), JSON.stringify(result), id];
    for (let attempt = 1; ; attempt++) {
      try {
        await this.sql(FINISH_SQL, params, 'run');
        return;
      } catch (error) {
        if (attempt >= 5) {
          this.options.log.error({ err: error, job: id }, 'could not record the end of a job');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
  }

  private sql<T>(query: string, params: unknown[], method: 'all' | 'run' = 'all'): Promise<T> {
    return this.options.orm.em.getConnection().execute(query, params, method) as Promise<T>;
  }
}

/** Counters and bounded error list of one running job. */
class JobState {
  total: number;
  succeeded = 0;
  failed = 0;
  readonly errors: JobItemError[] = [];

  constructor(job: Job) {
    this.total = job.total;
  }

  counters(): [number, number, number, number] {
    return [this.total, this.succeeded + this.failed, this.succeeded, this.failed];
  }

  error(error: JobItemError): void {
    if (this.errors.length < MAX_JOB_ERRORS) this.errors.push(error);
  }
}
