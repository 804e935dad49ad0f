import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { newId } from '../platform/crypto/ids.js';
import type { Lifecycle } from '../platform/lifecycle.js';
import type { Metrics } from '../platform/metrics.js';
import type { ConnectorLogLevel } from './connector.entity.js';

/** Entries kept per connector; the console searches the latest 100 (spec, Limits). */
export const LOG_KEEP = 100;
const FLUSH_EVERY_MS = 2000;

interface Pending {
  in: number;
  failed: number;
  /** Epoch ms of the latest packet (0: none); a number, so counting allocates nothing per packet. */
  lastMs: number;
}

export type PacketResult = 'in' | 'failed';

/** Minute buckets the overview reads (the last hour); older ones go with the next minute's flush. */
export const MINUTES_KEPT = 120;
const MINUTE_MS = 60_000;

// One statement: the counters on the connector row and the current minute's bucket. Buckets are only
// written for connectors the UPDATE found, so a connector deleted meanwhile breaks no foreign key.
const FLUSH_SQL = `
  WITH v AS (SELECT * FROM jsonb_to_recordset(?::jsonb) AS v(id uuid, i bigint, f bigint, l timestamptz)),
  counted AS (
    UPDATE connectors c
       SET packets_in = c.packets_in + v.i,
           packets_failed = c.packets_failed + v.f,
           last_packet_at = greatest(c.last_packet_at, v.l)
      FROM v
     WHERE c.id = v.id
    RETURNING c.id)
  INSERT INTO connector_packet_minutes AS m (connector_id, minute, packets_in, packets_failed)
  SELECT v.id, ?::timestamptz, v.i, v.f FROM v JOIN counted ON counted.id = v.id
  ON CONFLICT (connector_id, minute) DO UPDATE
     SET packets_in = m.packets_in + excluded.packets_in,
         packets_failed = m.packets_failed + excluded.packets_failed`;

const LOG_SQL = `
  INSERT INTO connector_logs (id, connector_id, level, message, details, created_at)
  SELECT ?, id, ?, ?, ?::jsonb, ? FROM connectors WHERE id = ?`;

// Keeps the newest LOG_KEEP entries: everything older than the LOG_KEEP-th newest goes. "Older" in
// the list's own order, (created_at, id): entries written within one millisecond share created_at,
// and their time-ordered ids decide, so a tie at the boundary cannot keep one entry too many.
const PRUNE_SQL = `
  DELETE FROM connector_logs
   WHERE connector_id = ?
     AND (created_at, id) < (SELECT created_at, id FROM connector_logs WHERE connector_id = ?
                              ORDER BY created_at DESC, id DESC OFFSET ${LOG_KEEP - 1} LIMIT 1)`;

/**
 * Per-connector packet counters and the connector log, written from every front door (broker,
 * webhooks, mqtt-in). Counters are kept in memory and added to the `connectors` row every
 * FLUSH_EVERY_MS in one statement, never one write per packet, together with the minute bucket
 * the overview's ingest rate reads; a crash loses at most that window
 * of counts (never packets). Prometheus gets them at its next scrape.
 */
export class ConnectorTelemetry implements Lifecycle {
  readonly name = 'connector-telemetry';
  private pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;
  private lastPruneMinute = 0;
  private flushing: Promise<void> | undefined;
  /**
   * Counts per connector not yet added to the Prometheus counter, added at each scrape: prom-client
   * hashes and checks the labels on every increment, a labelled child too, which allocated on every
   * packet of the broker's thread (ADR 0141).
   */
  private readonly unscraped = new Map<string, Record<PacketResult, number>>();

  constructor(
    private readonly orm: MikroORM,
    private readonly log: FastifyBaseLogger,
    metrics: Metrics,
  ) {
    // Labelled by connector id: fine for hundreds of connectors (docs/adr/0072-connector-telemetry.md).
    metrics.counter(
      'stellwerk_connector_packets_total',
      'Packets per connector',
      ['connector', 'result'],
      (counter) => {
        for (const [connector, counts] of this.unscraped) {
          // Both series, zero too, as soon as a connector counted anything.
          counter.inc({ connector, result: 'in' }, counts.in);
          counter.inc({ connector, result: 'failed' }, counts.failed);
          counts.in = counts.failed = 0;
        }
      },
    );
  }

  /** Counts packets of a connector; `in` = durably stored, `failed` = refused. */
  record(connectorId: string, result: PacketResult, count = 1, at?: Date): void {
    if (count <= 0) return;
    let counts = this.unscraped.get(connectorId);
    if (!counts) this.unscraped.set(connectorId, (counts = { in: 0, failed: 0 }));
    counts[result] += count;
    let entry = this.pending.get(connectorId);
    if (!entry) this.pending.set(connectorId, (entry = { in: 0, failed: 0, lastMs: 0 }));
    entry[result] += count;
    const ms = at ? at.getTime() : Date.now();
    if (entry.lastMs < ms) entry.lastMs = ms;
    this.arm();
  }

  /** Counts not yet flushed, so replies show what happened a moment ago. */
  unflushed(connectorId: string): { in: number; failed: number; last: Date | null } | undefined {
    const entry = this.pending.get(connectorId);
    return (
      entry && { in: entry.in, failed: entry.failed, last: entry.lastMs ? new Date(entry.lastMs) : null }
    );
  }

  /** Appends a connector log entry; never throws (a log write must not break ingestion). */
  async write(
    connectorId: string,
    level: ConnectorLogLevel,
    message: string,
    details: Record<string, unknown> = {},
  ): Promise<void> {
    try {
      const sql = (query: string, params: unknown[]) =>
        this.orm.em.getConnection().execute(query, params, 'run');
      await sql(LOG_SQL, [
        newId(),
        level,
        message.slice(0, 2000),
        JSON.stringify(details),
        new Date(),
        connectorId,
      ]);
      await sql(PRUNE_SQL, [connectorId, connectorId]);
    } catch (error) {
      this.log.warn({ err: error, connectorId }, 'connector log write failed');
    }
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /** Writes pending counters; failed writes are merged back and retried with the next flush. */
  async flush(): Promise<void> {
    await this.flushing;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const rows = [...batch].map(([id, p]) => ({
      id,
      i: p.in,
      f: p.failed,
      l: p.lastMs ? new Date(p.lastMs).toISOString() : null,
    }));
    // A flush counts its packets in the minute it runs: at most FLUSH_EVERY_MS late, never lost.
    const minute = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS;
    const connection = this.orm.em.getConnection();
    this.flushing = connection
      .execute(FLUSH_SQL, [JSON.stringify(rows), new Date(minute)], 'run')
      .then(
        () => this.prune(minute),
        (error: unknown) => {
          this.log.warn({ err: error }, 'connector counter flush failed; retrying');
          for (const [id, p] of batch) {
            const entry = this.pending.get(id) ?? { in: 0, failed: 0, lastMs: 0 };
            entry.in += p.in;
            entry.failed += p.failed;
            entry.lastMs = Math.max(entry.lastMs, p.lastMs);
            this.pending.set(id, entry);
          }
          this.arm();
        },
      )
      .finally(() => {
        this.flushing = undefined;
      });
    await this.flushing;
  }

  /** Once a minute per node: buckets older than MINUTES_KEPT go (a failure waits for the next minute). */
  private async prune(minute: number): Promise<void> {
    if (minute === this.lastPruneMinute) return;
    this.lastPruneMinute = minute;
    try {
      await this.orm.em
        .getConnection()
        .execute(
          `DELETE FROM connector_packet_minutes WHERE minute < ?`,
          [new Date(minute - MINUTES_KEPT * MINUTE_MS)],
          'run',
        );
    } catch (error) {
      this.log.warn({ err: error }, 'connector minute buckets prune failed');
    }
  }

  private arm(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, FLUSH_EVERY_MS);
    this.timer.unref();
  }
}
