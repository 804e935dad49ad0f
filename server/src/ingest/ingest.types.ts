import type { PacketMeta } from './packet-meta.js';
import type { ErrorCode } from '../platform/error-codes.js';

/**
 * The seam between the front doors (embedded broker, webhooks, mqtt-in, hub API) and the ingest
 * path. A front door acknowledges a packet only after `PacketSink.append` resolved: by then the
 * packet is committed to the durable packet store, and everything after it can be replayed.
 */

export interface IncomingPacket {
  connectorId: string;
  /** The `device_id` the sender used (topic segment or payload field). */
  deviceKey: string;
  payload: Buffer;
  /** `mqtt`, `webhook`, `mqtt-in`, `hub`, … */
  source: string;
  receivedAt: Date;
  /** Network-server metadata or the MQTT topic (packet-meta.ts); absent when the front door knows none. */
  meta?: PacketMeta;
}

export class PacketRefusedError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'PacketRefusedError';
  }
}

/** The largest payload a client connection of a connector (mqtt-in, field-protocol links) stores. */
export const MAX_CLIENT_PAYLOAD_BYTES = 256 * 1024;

const TRANSIENT_REFUSALS: ReadonlySet<string> = new Set([
  'INGEST_BUSY',
  'INGEST_STORE_FAILED',
  'INGEST_STOPPED',
]);

/**
 * A refusal for good (no device id, too large, invalid): the sender may be told it is received, as
 * sending it again would never succeed. Anything else (the store is busy, failing or stopping) is not
 * acknowledged, so the peer sends it again.
 */
export const isPermanentRefusal = (error: unknown): error is PacketRefusedError =>
  error instanceof PacketRefusedError && !TRANSIENT_REFUSALS.has(error.code);

export interface PacketSink {
  /** Resolves once the packet is durably stored; rejects with PacketRefusedError when refused (full, invalid). */
  append(packet: IncomingPacket): Promise<void>;
}

/** At most this many items in a packet that is a JSON array (spec, Limits). */
export const MAX_ARRAY_ITEMS = 50;
