import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';

/**
 * A link to an external system. `type` names a connector-kind plugin (`mqtt-broker`, `webhook-in`,
 * `mqtt-in`, `tts-uplink`, …); `config` is that kind's settings, secrets sealed with the server key.
 */
export class Connector {
  id: string = newId();
  account!: Account;
  title!: string;
  description = '';
  type!: string;
  active = true;
  config: Record<string, unknown> = {};
  /** Embedded-broker login name (mqtt-broker kind); unique across the instance. */
  brokerUsername: string | null = null;
  /** SHA-256 of the 256-bit broker password: cheap enough to check on every CONNECT. */
  brokerPasswordHash: string | null = null;
  /** Sealed secret part of the incoming-webhook URL (webhook-in, tts-uplink kinds). */
  webhookTokenSealed: string | null = null;
  /** SHA-256 of that token, for the lookup when a webhook arrives. */
  webhookTokenHash: string | null = null;
  packetsIn = 0;
  packetsFailed = 0;
  lastPacketAt: Date | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const ConnectorSchema = new EntitySchema<Connector>({
  class: Connector,
  tableName: 'connectors',
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    title: { type: 'string', length: 200 },
    description: { type: 'text' },
    type: { type: 'string', length: 40, index: true },
    active: { type: 'boolean', default: true },
    config: { type: 'json' },
    brokerUsername: { type: 'string', length: 100, nullable: true, unique: true },
    brokerPasswordHash: { type: 'string', length: 64, nullable: true, hidden: true },
    webhookTokenSealed: { type: 'text', nullable: true, hidden: true },
    webhookTokenHash: { type: 'string', length: 64, nullable: true, unique: true, hidden: true },
    packetsIn: { type: 'bigint', default: 0 },
    packetsFailed: { type: 'bigint', default: 0 },
    lastPacketAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});

export type ConnectorLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** What happened at a connector (refused packets, connection changes); the newest entries are kept. */
export class ConnectorLog {
  id: string = newId();
  connector!: Connector;
  level: ConnectorLogLevel = 'info';
  message!: string;
  details: Record<string, unknown> = {};
  createdAt: Date = new Date();
}

export const ConnectorLogSchema = new EntitySchema<ConnectorLog>({
  class: ConnectorLog,
  tableName: 'connector_logs',
  indexes: [{ properties: ['connector', 'createdAt'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    connector: { kind: 'm:1', entity: () => Connector, deleteRule: 'cascade' },
    level: { type: 'string', length: 8 },
    message: { type: 'text' },
    details: { type: 'json' },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
  },
});

/**
 * Packets of a connector in one minute (UTC), added by every node's counter flush
 * (connector-telemetry.ts): the overview's ingest rate reads at most 60 rows per connector
 * instead of counting the packet store. Rows older than MINUTES_KEPT are deleted by the flush.
 */
export class ConnectorPacketMinute {
  connector!: Connector;
  minute!: Date;
  packetsIn = 0;
  packetsFailed = 0;
}

export const ConnectorPacketMinuteSchema = new EntitySchema<ConnectorPacketMinute>({
  class: ConnectorPacketMinute,
  tableName: 'connector_packet_minutes',
  indexes: [{ properties: ['minute'] }],
  properties: {
    connector: { kind: 'm:1', entity: () => Connector, primary: true, deleteRule: 'cascade' },
    minute: { type: 'datetime', columnType: 'timestamptz', primary: true },
    packetsIn: { type: 'integer', default: 0 },
    packetsFailed: { type: 'integer', default: 0 },
  },
});
