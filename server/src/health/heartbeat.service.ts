import os from 'node:os';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { Counter } from 'prom-client';
import type { AppContext } from '../context.js';
import type { Lifecycle } from '../platform/lifecycle.js';
import { VERSION } from '../version.js';

/** Stopped (or long-dead) nodes disappear from the health reply after a day. */
export const PRUNE_AFTER_MS = 24 * 60 * 60 * 1000;
const PRUNE_EVERY_MS = 60 * 60 * 1000;

// One statement for the first beat and every later one: a row deleted behind our back (restore,
// manual cleanup) comes back on the next beat, and a node wrongly marked stopped revives.
const BEAT_SQL = `
  INSERT INTO server_nodes (id, name, hostname, pid, version, started_at, last_heartbeat, stopped_at, details)
  VALUES (?, ?, ?, ?, ?, ?, now(), NULL, '{}'::jsonb)
  ON CONFLICT (id) DO UPDATE SET last_heartbeat = now(), stopped_at = NULL`;

// A crashed node never writes stopped_at; when a node starts on the same host, earlier nodes of
// that host that are already silent are taken as crashed and retired (see docs/adr/0040).
const RETIRE_CRASHED_SQL = `
  UPDATE server_nodes SET stopped_at = last_heartbeat, details = details || '{"endedBy":"crash"}'::jsonb
   WHERE hostname = ? AND id <> ? AND stopped_at IS NULL AND last_heartbeat < now() - make_interval(secs => ?)`;

const PRUNE_SQL = `DELETE FROM server_nodes WHERE coalesce(stopped_at, last_heartbeat) < now() - make_interval(secs => ?)`;

const STOP_SQL = `UPDATE server_nodes SET last_heartbeat = now(), stopped_at = now() WHERE id = ?`;

export interface HeartbeatOptions {
  orm: MikroORM;
  log: FastifyBaseLogger;
  nodeId: string;
  nodeName: string;
  intervalMs: number;
  /** Silence after which other nodes call this one faulty; used to recognise crashed predecessors. */
  faultyAfterMs: number;
  failures?: Counter;
}

/**
 * Writes this process's row in `server_nodes` at start, then `last_heartbeat = now()` every
 * `intervalMs`, and `stopped_at` at a clean stop. Times come from PostgreSQL's clock, so nodes with
 * skewed clocks still agree. Runs outside any request: plain SQL on the shared pool, no
 * RequestContext. The timer is unref'd and re-armed only after a beat ends, so beats never overlap
 * and a heartbeat alone never keeps the process alive.
 */
export class HeartbeatService implements Lifecycle {
  readonly name = 'heartbeat';
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private running = false;
  private lastPrune = 0;
  private readonly startedAt = new Date(Date.now() - Math.round(process.uptime() * 1000));

  constructor(private readonly options: HeartbeatOptions) {}

  static fromContext(ctx: AppContext): HeartbeatService {
    return new HeartbeatService({
      orm: ctx.orm,
      log: ctx.log,
      nodeId: ctx.nodeId,
      nodeName: ctx.config.nodeName,
      intervalMs: ctx.config.heartbeatIntervalMs,
      faultyAfterMs: ctx.config.nodeFaultyAfterMs,
      failures: ctx.metrics.counter('stellwerk_heartbeat_failures_total', 'Heartbeat writes that failed'),
    });
  }

  /** The first beat must succeed: a node that cannot write its row should not report ready. */
  async start(): Promise<void> {
    await this.beat();
    await this.sql(RETIRE_CRASHED_SQL, [
      os.hostname(),
      this.options.nodeId,
      this.options.faultyAfterMs / 1000,
    ]);
    await this.prune();
    this.running = true;
    this.arm(this.options.intervalMs);
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
    await this.sql(STOP_SQL, [this.options.nodeId]);
  }

  private arm(delayMs: number): void {
    this.timer = setTimeout(() => this.tick(), delayMs);
    this.timer.unref();
  }

  private tick(): void {
    const began = performance.now();
    this.inFlight = this.beat()
      .then(() => this.prune())
      .catch((error: unknown) => {
        this.options.failures?.inc();
        this.options.log.warn(
          { err: error },
          'heartbeat write failed; other nodes will report this one faulty',
        );
      })
      .finally(() => {
        this.inFlight = undefined;
        // Measured from the start of this beat, so the period does not stretch by the write time.
        if (this.running) this.arm(Math.max(0, this.options.intervalMs - (performance.now() - began)));
      });
  }

  private async beat(): Promise<void> {
    const { nodeId, nodeName } = this.options;
    await this.sql(BEAT_SQL, [nodeId, nodeName, os.hostname(), process.pid, VERSION, this.startedAt]);
  }

  private async prune(): Promise<void> {
    if (Date.now() - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = Date.now();
    await this.sql(PRUNE_SQL, [PRUNE_AFTER_MS / 1000]);
  }

  private sql(query: string, params: unknown[]): Promise<unknown> {
    return this.options.orm.em.getConnection().execute(query, params, 'run');
  }
}
