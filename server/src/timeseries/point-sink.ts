import { OutboxSink } from './outbox.js';
import { copyPoints } from './targets/points-copy.js';
import type { PointClient, PointSink, TimeSeriesPoint } from './timeseries.types.js';

/** Where points go from the transaction that changed their states (ADR 0111). */
export interface PointRouting {
  /** A `postgres` target is configured: points go into `ts_points` in that transaction. */
  postgres: boolean;
  /** An external target is configured: points go into the outbox, for its writer. */
  outbox: boolean;
}

export function pointRouting(targets: ReadonlyArray<{ kind: string }>): PointRouting {
  return {
    postgres: targets.some((t) => t.kind === 'postgres'),
    outbox: targets.some((t) => t.kind !== 'postgres'),
  };
}

/**
 * The state engine's sink: a point is written once, in the transaction that changed its state.
 * The server's own PostgreSQL gets it as a `ts_points` row right there (exactly once, no second
 * write and no writer loop); only external targets (InfluxDB, VictoriaMetrics), which can be down
 * for hours, need the durable outbox and their writers.
 */
export class TransactionalPointSink implements PointSink {
  private readonly outbox = new OutboxSink();

  constructor(private readonly routing: PointRouting) {}

  async append(client: PointClient, points: TimeSeriesPoint[]): Promise<void> {
    if (points.length === 0) return;
    if (this.routing.postgres) await copyPoints(client, points);
    if (this.routing.outbox) await this.outbox.append(client, points);
  }
}
