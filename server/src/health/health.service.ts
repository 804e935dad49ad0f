import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import type { DatabaseAvailability } from '../platform/db/database-availability.js';
import { isDatabaseUnavailable } from '../platform/db/database-availability.js';
import { openFileLimit, type OpenFileLimit } from '../platform/open-files.js';
import { VERSION } from '../version.js';

export type NodeStatus = 'ok' | 'faulty' | 'stopped';

export interface NodeHealth {
  id: string;
  name: string;
  hostname: string;
  pid: number;
  version: string;
  startedAt: string;
  lastHeartbeat: string;
  stoppedAt: string | null;
  status: NodeStatus;
  silentForMs: number;
}

export interface HealthReport {
  status: 'ok' | 'degraded';
  checkedAt: string;
  /** The node that answered. */
  checkedBy: string;
  /** The Stellwerk version of the answering node (package.json). */
  version: string;
  database: { status: 'ok' | 'failed'; latencyMs: number; message?: string };
  nodes: NodeHealth[];
  /** The answering node's open-file limit now; null where the platform has none (Windows). */
  openFiles: OpenFileLimit | null;
}

interface NodeRow {
  id: string;
  name: string;
  hostname: string;
  pid: number;
  version: string;
  started_at: string;
  last_heartbeat: string;
  stopped_at: string | null;
  checked_at: string;
  silent_for_ms: string;
}

// Times as epoch milliseconds: the ORM's pool hands timestamptz out as raw text. Silence is
// measured on PostgreSQL's clock, the same clock that wrote the heartbeats.
const epochMs = (column: string) => `floor(extract(epoch FROM ${column}) * 1000)::bigint`;
const NODES_SQL = `
  SELECT id, name, hostname, pid, version, ${epochMs('started_at')} AS started_at,
         ${epochMs('last_heartbeat')} AS last_heartbeat, ${epochMs('stopped_at')} AS stopped_at,
         ${epochMs('now()')} AS checked_at, ${epochMs('now() - last_heartbeat')} AS silent_for_ms
    FROM server_nodes
   ORDER BY started_at, name`;

const iso = (epochMillis: string) => new Date(Number(epochMillis)).toISOString();

/**
 * A heartbeat lands every interval, so a healthy node is routinely silent for almost the whole
 * interval; this allowance keeps a beat delayed by the write or a busy event loop from flickering
 * to faulty (docs/adr/0040). Bounded so a SIGKILL'd node is still reported within 12 s by default.
 */
export const faultyAllowanceMs = (faultyAfterMs: number): number =>
  Math.min(2000, Math.round(faultyAfterMs * 0.2));

export function nodeStatus(
  row: { stopped_at: string | null },
  silentForMs: number,
  faultyAfterMs: number,
): NodeStatus {
  if (row.stopped_at) return 'stopped';
  return silentForMs > faultyAfterMs + faultyAllowanceMs(faultyAfterMs) ? 'faulty' : 'ok';
}

/**
 * The cluster's health as stored in PostgreSQL: one query reads every node's last heartbeat; nodes
 * are never contacted live, so a hung node cannot slow the answer. Public: returns nothing secret.
 */
export class HealthService {
  constructor(
    private readonly orm: MikroORM,
    private readonly nodeId: string,
    private readonly faultyAfterMs: number,
    private readonly log: FastifyBaseLogger,
    private readonly database?: Pick<DatabaseAvailability, 'up' | 'suspect'>,
  ) {}

  static fromContext(ctx: AppContext): HealthService {
    const service = new HealthService(
      ctx.orm,
      ctx.nodeId,
      ctx.config.nodeFaultyAfterMs,
      ctx.log,
      ctx.database,
    );
    ctx.metrics.gauge(
      'stellwerk_nodes',
      'Server nodes by status, as stored in PostgreSQL',
      ['status'],
      async (gauge) => {
        const report = await service.check();
        gauge.reset();
        if (report.database.status !== 'ok') return;
        for (const status of ['ok', 'faulty', 'stopped'] as const) {
          gauge.set({ status }, report.nodes.filter((n) => n.status === status).length);
        }
      },
    );
    return service;
  }

  async check(): Promise<HealthReport> {
    const openFiles = await openFileLimit();
    const began = performance.now();
    const failed = (message: string): HealthReport => ({
      status: 'degraded',
      checkedAt: new Date().toISOString(),
      checkedBy: this.nodeId,
      version: VERSION,
      database: { status: 'failed', latencyMs: elapsed(began), message },
      nodes: [],
      openFiles,
    });
    // Known to be down: answer at once instead of waiting for a connection that cannot come.
    if (this.database?.up === false) return failed('database unreachable');
    let rows: NodeRow[];
    try {
      rows = await this.orm.em.getConnection().execute<NodeRow[]>(NODES_SQL);
    } catch (error) {
      // The failed query is the finding, not an error of this request: report it as such.
      this.log.warn({ err: error }, 'health check: database query failed');
      if (!isDatabaseUnavailable(error)) return failed('database query failed');
      this.database?.suspect();
      return failed('database unreachable');
    }
    const latencyMs = elapsed(began);
    const nodes = rows.map((row): NodeHealth => {
      const silentForMs = Math.max(0, Number(row.silent_for_ms));
      return {
        id: row.id,
        name: row.name,
        hostname: row.hostname,
        pid: row.pid,
        version: row.version,
        startedAt: iso(row.started_at),
        lastHeartbeat: iso(row.last_heartbeat),
        stoppedAt: row.stopped_at === null ? null : iso(row.stopped_at),
        status: nodeStatus(row, silentForMs, this.faultyAfterMs),
        silentForMs,
      };
    });
    return {
      status: nodes.some((n) => n.status === 'faulty') ? 'degraded' : 'ok',
      checkedAt: rows[0] ? iso(rows[0].checked_at) : new Date().toISOString(),
      checkedBy: this.nodeId,
      version: VERSION,
      database: { status: 'ok', latencyMs },
      nodes,
      openFiles,
    };
  }
}

const elapsed = (began: number) => Math.round((performance.now() - began) * 10) / 10;
