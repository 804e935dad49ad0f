import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import type { Lifecycle } from '../lifecycle.js';
import type { Metrics } from '../metrics.js';
import { pgPoolUsage, trackPool } from './pool-metrics.js';

export interface DatabaseAvailabilityOptions {
  databaseUrl: string;
  log: FastifyBaseLogger;
  metrics?: Metrics;
  /** Probe period while the database answers; while it does not, twice as often. */
  intervalMs?: number;
  /** A probe that takes longer (connect or `SELECT 1`) counts as failed. */
  timeoutMs?: number;
}

export type AvailabilityListener = (up: boolean) => void;

// Socket errors of a database that is gone or not reachable.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// SQLSTATE: admin_shutdown, crash_shutdown, cannot_connect_now (starting up, in recovery).
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03']);
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'Connection ended unexpectedly',
  'not queryable',
  'Timeout acquiring a connection',
  'timeout exceeded when trying to connect',
];

/**
 * True when `error` says the database cannot be reached (socket errors, a server shutting down or
 * recovering, a connection lost mid-query, no connection within the pool's timeout), as opposed to
 * a statement the database refused. Looks through `cause` chains (the ORM wraps driver errors).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_STATES.has(code))) return true;
    // Class 08: connection exceptions.
    if (typeof code === 'string' && /^08[0-9A-Z]{3}$/.test(code)) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((m) => message.includes(m))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Whether PostgreSQL answers, probed with `SELECT 1` on a connection of its own every `intervalMs`
 * (so a pool exhausted by load does not read as an outage). `/health` and the API's error replies read
 * `up`; whoever sees the database fail (the embedded supervisor, a request) calls `suspect()` to probe
 * at once. Transitions are logged once each, with the outage's length when it ends.
 */
export class DatabaseAvailability implements Lifecycle {
  readonly name = 'database-availability';
  private reachable = true;
  private downSince = 0;
  private pool: pg.Pool | undefined;
  private timer: NodeJS.Timeout | undefined;
  private probing: Promise<boolean> | undefined;
  private running = false;
  /** The server is stopping: a database that goes away now is expected (see `serverStopping`). */
  private stopping = false;
  private readonly listeners: AvailabilityListener[] = [];
  private readonly intervalMs: number;
  private readonly timeoutMs: number;

  constructor(private readonly options: DatabaseAvailabilityOptions) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.timeoutMs = options.timeoutMs ?? 5000;
    options.metrics?.gauge(
      'stellwerk_database_up',
      '1 while PostgreSQL answers this node, 0 while it does not',
      [],
      (gauge) => gauge.set(this.reachable ? 1 : 0),
    );
  }

  get up(): boolean {
    return this.reachable;
  }

  /** Milliseconds since the database stopped answering; 0 while it answers. */
  get downForMs(): number {
    return this.reachable ? 0 : Date.now() - this.downSince;
  }

  onChange(listener: AvailabilityListener): void {
    this.listeners.push(listener);
  }

  /** Something saw the database fail or come back: probe now rather than at the next tick. */
  suspect(): void {
    void this.check();
  }

  /** Probes (one probe at a time) and resolves with the outcome. */
  check(): Promise<boolean> {
    this.probing ??= this.probe().finally(() => (this.probing = undefined));
    return this.probing;
  }

  /**
   * Called first thing on SIGINT/SIGTERM. Ctrl-C in a terminal signals the whole process group, so
   * an embedded PostgreSQL stops at the same moment as the server: its loss is then reported as
   * part of the stop, not as an outage.
   */
  serverStopping(): void {
    this.stopping = true;
  }

  async start(): Promise<void> {
    this.running = true;
    await this.check();
    this.arm();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.probing;
    await this.pool?.end().catch(() => undefined);
    this.pool = undefined;
  }

  private arm(): void {
    if (!this.running) return;
    const delay = this.reachable ? this.intervalMs : Math.max(100, this.intervalMs / 2);
    this.timer = setTimeout(() => void this.check().finally(() => this.arm()), delay);
    this.timer.unref();
  }

  private async probe(): Promise<boolean> {
    const pool = (this.pool ??= this.createPool());
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        pool.query('SELECT 1'),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${this.timeoutMs} ms`)),
            this.timeoutMs,
          );
        }),
      ]);
      this.changeTo(true);
    } catch (error) {
      this.changeTo(false, error);
    } finally {
      clearTimeout(timer);
    }
    return this.reachable;
  }

  private createPool(): pg.Pool {
    const pool = new pg.Pool({
      connectionString: this.options.databaseUrl,
      max: 1,
      connectionTimeoutMillis: this.timeoutMs,
      query_timeout: this.timeoutMs,
      application_name: 'stellwerk-availability-probe',
      allowExitOnIdle: true,
    });
    // Its idle connection dropping is the news itself: look at once.
    pool.on('error', () => this.suspect());
    if (this.options.metrics) trackPool(this.options.metrics, 'availability-probe', pgPoolUsage(pool));
    return pool;
  }

  private changeTo(up: boolean, error?: unknown): void {
    if (up === this.reachable) return;
    this.reachable = up;
    if (up) {
      this.options.log.info({ downMs: Date.now() - this.downSince }, 'database reachable again');
    } else {
      this.downSince = Date.now();
      if (this.stopping) this.options.log.info({ err: error }, 'database closed while the server stops');
      else this.options.log.error({ err: error }, 'database unreachable');
    }
    for (const listener of this.listeners) {
      try {
        listener(up);
      } catch (listenerError) {
        this.options.log.warn({ err: listenerError }, 'database availability: a listener failed');
      }
    }
  }
}
