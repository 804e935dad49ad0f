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

export interface PacketSink {
  /** Resolves once the packet is durably stored; rejects with PacketRefusedError when refused (full, invalid). */
  append(packet: IncomingPacket): Promise<void>;
}

/** At most this many items in a packet that is a JSON array (spec, Limits). */
export const MAX_ARRAY_ITEMS = 50;
