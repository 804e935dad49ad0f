import pg from 'pg';
import { pgPoolUsage, trackPool } from '../platform/db/pool-metrics.js';
import type { Metrics } from '../platform/metrics.js';
import type { PacketMeta } from '../ingest/packet-meta.js';

/**
 * Cluster mode (ADR 0130): recognises a QoS 1 message a client sends again after a reconnect although
 * it was already stored. That happens when the node that took it died between the PostgreSQL commit
 * and the PUBACK; the client reconnects (through the load balancer, to another node) and sends its
 * unacknowledged messages again — with the DUP flag as MQTT asks, or, as mqtt.js does, without it.
 *
 * A message is looked up only when it may be such a resend: DUP set, or sent within RESEND_WINDOW_MS of
 * its connection's CONNECT. It is a resend when the same connector and device stored, within
 * LOOKBACK_MS before that CONNECT, a packet with the same MQTT packet id and the same payload (the
 * packet id is kept in the packet's meta in cluster mode). Exact for a resend; a new message would
 * have to repeat both the payload and the packet id of one sent just before the reconnect to be
 * taken for one. The lookup reads the device's latest packets by the (connector_id, device_key, id)
 * index, never the table.
 */

export const RESEND_WINDOW_MS = 3_000;

/**
 * A connection's state for resends: while a message waits for its look-up, the connection's later
 * messages wait their turn too, so packets are stored in the order the client sent them (a device's
 * states only move forward in packet order).
 */
export interface ResendSession {
  connectedAt: number;
  /** Resolves once the last ordered message was handed to the packet store. */
  turn: Promise<void>;
  /** Ordered messages not yet handed to the packet store. */
  waiting: number;
}

export const resendSession = (): ResendSession => ({
  connectedAt: Date.now(),
  turn: Promise.resolve(),
  waiting: 0,
});

export interface PossibleResend {
  connectorId: string;
  deviceKey: string;
  payload: Buffer;
  packetId: number;
  dup: boolean;
}
const LOOKBACK_MS = 120_000;
const RECENT_PACKETS = 500;

const STORED_SQL = `
  SELECT 1 FROM (
    SELECT payload, meta, received_at FROM packets
     WHERE connector_id = $1 AND device_key = $2 ORDER BY id DESC LIMIT ${RECENT_PACKETS}) AS recent
   WHERE recent.received_at >= $5 AND (recent.meta ->> 'mqttPacketId')::int = $4 AND recent.payload = $3
   LIMIT 1`;

/** Registered on every node (0 on a single node): /metrics has one set of families whatever the mode. */
const resendsSkippedCounter = (metrics: Metrics) =>
  metrics.counter(
    'stellwerk_broker_resends_skipped_total',
    'QoS 1 messages a client sent again after a reconnect that were already stored (acknowledged, not stored twice)',
  );

/**
 * The node's resend check: the counter on every node, the check itself in cluster mode only (a single
 * node's spool acknowledges before any other node could have stored the message).
 */
export function storedResends(
  metrics: Metrics,
  cluster: { databaseUrl: string } | undefined,
): StoredResends | undefined {
  const skipped = resendsSkippedCounter(metrics);
  return cluster ? new StoredResends(cluster.databaseUrl, metrics, skipped) : undefined;
}

export class StoredResends {
  private readonly pool: pg.Pool;

  constructor(
    databaseUrl: string,
    metrics: Metrics,
    /** resendsSkippedCounter, registered once per node whatever the mode. */
    private readonly skipped: { inc(): void },
  ) {
    this.pool = new pg.Pool({
      connectionString: databaseUrl,
      max: 2,
      application_name: 'stellwerk-broker-resends',
    });
    this.pool.on('error', () => undefined);
    trackPool(metrics, 'broker-resends', pgPoolUsage(this.pool));
  }

  /**
   * Hands the message to `append` (with its packet id as meta) unless it is a resend of a stored one;
   * in the order the connection sent its messages. Messages that cannot be resends, with none waiting
   * before them, go straight through.
   */
  appendUnlessStored(
    session: ResendSession,
    message: PossibleResend,
    append: (meta: PacketMeta) => Promise<void>,
  ): Promise<void> {
    const meta = { mqttPacketId: message.packetId };
    const mayBeResend = message.dup || Date.now() - session.connectedAt < RESEND_WINDOW_MS;
    if (!mayBeResend && session.waiting === 0) return append(meta);
    const lookup = mayBeResend
      ? this.isStored(message, session.connectedAt).then(
          (stored) => ({ stored }),
          (error: unknown) => ({ error }),
        )
      : Promise.resolve({ stored: false });
    const previous = session.turn;
    let handedOver!: () => void;
    session.turn = new Promise<void>((resolve) => (handedOver = resolve));
    session.waiting += 1;
    return Promise.all([lookup, previous]).then(([outcome]) => {
      session.waiting -= 1;
      try {
        if ('error' in outcome) throw outcome.error;
        return outcome.stored ? undefined : append(meta);
      } finally {
        handedOver();
      }
    });
  }

  private async isStored(message: PossibleResend, connectedAt: number): Promise<boolean> {
    const { rows } = await this.pool.query(STORED_SQL, [
      message.connectorId,
      message.deviceKey,
      message.payload,
      message.packetId,
      new Date(connectedAt - LOOKBACK_MS),
    ]);
    if (rows.length > 0) this.skipped.inc();
    return rows.length > 0;
  }

  /** After the broker closed: no look-up is in flight any more. */
  async stop(): Promise<void> {
    await this.pool.end();
  }
}
