import { EntitySchema } from '@mikro-orm/core';
import type { PacketMeta } from './packet-meta.js';

/**
 * The durable packet store. A packet is appended here (batched, in the broker's authorizePublish or
 * the webhook handler) before it is acknowledged; everything after is derived and can be replayed
 * from `ingest_cursor`. Written by the ingest hot path with plain SQL, never through the ORM.
 */
export class Packet {
  id!: string;
  connectorId!: string;
  /** The `device_id` as the sender named it (topic segment or payload field). */
  deviceKey!: string;
  /** Resolved device, written only with a non-`parsed` status (the history reads by deviceKey). */
  deviceUuid: string | null = null;
  receivedAt: Date = new Date();
  payload!: Buffer;
  /** `mqtt`, `webhook`, `hub`, … */
  source!: string;
  /**
   * null until processed, and for parsed packets (null at or below `ingest_cursor` means `parsed`,
   * PACKET_STATUS_SQL); otherwise `unknown-device`, `parse-error` or `failed`.
   */
  status: string | null = null;
  error: string | null = null;
  /** A payload codec's warnings (TS013 `warnings`), written only for packets that have some. */
  warnings: string[] | null = null;
  /** Network-server metadata or the MQTT topic (packet-meta.ts); null when the front door knew none. */
  meta: PacketMeta | null = null;
}

export const PacketSchema = new EntitySchema<Packet>({
  class: Packet,
  tableName: 'packets',
  // Packet history reads by the device's address (connector, device_id): no index on device_uuid, which
  // is written only for packets that did not parse (ADR 0092). Its prefix serves per-connector reads.
  indexes: [{ properties: ['connectorId', 'deviceKey', 'id'] }],
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: true },
    connectorId: { type: 'uuid' },
    deviceKey: { type: 'string', length: 200 },
    deviceUuid: { type: 'uuid', nullable: true },
    receivedAt: { type: 'datetime', columnType: 'timestamptz' },
    payload: { type: 'blob', columnType: 'bytea' },
    source: { type: 'string', length: 16 },
    status: { type: 'string', length: 16, nullable: true },
    error: { type: 'text', nullable: true },
    warnings: { type: 'json', columnType: 'jsonb', nullable: true },
    meta: { type: 'json', columnType: 'jsonb', nullable: true },
  },
});
