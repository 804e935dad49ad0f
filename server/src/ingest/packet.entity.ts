import { EntitySchema } from '@mikro-orm/core';

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
  /** Resolved device, when one is registered for that connector and `device_id`. */
  deviceUuid: string | null = null;
  receivedAt: Date = new Date();
  payload!: Buffer;
  /** `mqtt`, `webhook`, `hub`, … */
  source!: string;
  /** null until processed; then `parsed`, `unknown-device`, `parse-error` or `refused`. */
  status: string | null = null;
  error: string | null = null;
}

export const PacketSchema = new EntitySchema<Packet>({
  class: Packet,
  tableName: 'packets',
  indexes: [{ properties: ['deviceUuid', 'id'] }, { properties: ['connectorId', 'id'] }],
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
  },
});
