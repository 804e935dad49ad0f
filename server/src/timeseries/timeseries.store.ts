import type pg from 'pg';
import { safeErrorMessage } from '../platform/db/database-errors.js';
import { AppError } from '../platform/errors.js';
import type { PointFilter, TimeSeriesPoint, TimeSeriesReads, TimeSeriesTarget } from './timeseries.types.js';

export interface TimeSeriesStoreOptions {
  /** How long a health answer is reused (a query must not ping every target). */
  healthTtlMs?: number;
  /** A target whose oldest undelivered outbox row is older than this is catching up: not preferred. */
  maxLagMs?: number;
  now?: () => number;
}

/**
 * Who serves time-series reads. In configuration order, the first target that is healthy and
 * caught up (no undelivered outbox row older than `maxLagMs`: a target that just came back has
 * not received its backlog yet and would answer with holes); when every healthy target is
 * catching up, the first healthy one. So the primary serves while it is well, the first healthy
 * secondary when it is not, and the primary again once it has drained its backlog.
 */
export class TimeSeriesStore implements TimeSeriesReads {
  private readonly health = new Map<string, { ok: boolean; at: number }>();
  private lagging: { names: Set<string>; at: number } | undefined;
  private readonly healthTtlMs: number;
  private readonly maxLagMs: number;
  private readonly now: () => number;

  constructor(
    readonly targets: TimeSeriesTarget[],
    private readonly pool: pg.Pool,
    options: TimeSeriesStoreOptions = {},
  ) {
    if (targets.length === 0) throw new Error('at least one time-series target is needed');
    this.healthTtlMs = options.healthTtlMs ?? 1000;
    // Short: a target back from an outage shorter than this would serve answers missing that outage's
    // points; the writers' normal lag (poll, commit-order grace) stays well below it.
    this.maxLagMs = options.maxLagMs ?? 2000;
    this.now = options.now ?? Date.now;
  }

  get primary(): TimeSeriesTarget {
    return this.targets[0]!;
  }

  async servingTarget(): Promise<TimeSeriesTarget> {
    const [candidate] = await this.candidates();
    if (!candidate) throw unavailable(this.targets);
    return candidate;
  }

  /** Raw points from the serving target; when it fails mid-read, from the next candidate. */
  async readPoints(filter: PointFilter): Promise<TimeSeriesPoint[]> {
    return (await this.readPointsWithSource(filter)).points;
  }

  /** As readPoints, naming the target that answered. */
  async readPointsWithSource(filter: PointFilter): Promise<{ target: string; points: TimeSeriesPoint[] }> {
    let lastError: unknown;
    for (const target of await this.candidates()) {
      try {
        return { target: target.name, points: await target.readPoints(filter) };
      } catch (error) {
        lastError = error;
        this.health.set(target.name, { ok: false, at: this.now() });
      }
    }
    throw unavailable(this.targets, lastError);
  }

  /** Healthy targets, the preferred first. */
  private async candidates(): Promise<TimeSeriesTarget[]> {
    // In parallel: a target that times out must not add its timeout to every other check.
    const ok = await Promise.all(this.targets.map((target) => this.isHealthy(target)));
    const healthy = this.targets.filter((_, i) => ok[i]);
    if (healthy.length <= 1) return healthy;
    const lagging = await this.laggingTargets().catch(() => new Set<string>());
    return [...healthy.filter((t) => !lagging.has(t.name)), ...healthy.filter((t) => lagging.has(t.name))];
  }

  private async isHealthy(target: TimeSeriesTarget): Promise<boolean> {
    const known = this.health.get(target.name);
    if (known && this.now() - known.at < this.healthTtlMs) return known.ok;
    const ok = await target.health().catch(() => false);
    this.health.set(target.name, { ok, at: this.now() });
    return ok;
  }

  private async laggingTargets(): Promise<Set<string>> {
    if (this.lagging && this.now() - this.lagging.at < this.healthTtlMs) return this.lagging.names;
    const { rows } = await this.pool.query<{ name: string }>(
      `SELECT t.name FROM unnest($1::text[]) AS t(name)
         LEFT JOIN ts_target_cursors c ON c.target = t.name
        WHERE EXISTS (SELECT 1 FROM ts_outbox o
                       WHERE o.id > coalesce(c.outbox_id, 0)
                         AND o.created_at < now() - make_interval(secs => $2::float8 / 1000))`,
      // The postgres target gets its points in the state transaction: never behind (ADR 0111).
      [this.targets.filter((t) => t.kind !== 'postgres').map((t) => t.name), this.maxLagMs],
    );
    this.lagging = { names: new Set(rows.map((r) => r.name)), at: this.now() };
    return this.lagging.names;
  }
}

function unavailable(targets: TimeSeriesTarget[], cause?: unknown): AppError {
  const detail = cause instanceof Error ? safeErrorMessage(cause) : undefined;
  return new AppError(
    'TIMESERIES_UNAVAILABLE',
    503,
    'No time-series target is reachable',
    targets.map((t) => ({ target: t.name, ...(detail ? { error: detail } : {}) })),
  );
}
