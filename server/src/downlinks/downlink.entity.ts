import { EntitySchema } from '@mikro-orm/core';
import { Account } from '../accounts/account.entity.js';
import { Connector } from '../connectors/connector.entity.js';
import type { DownlinkStatus } from '../connectors/network-events.js';
import { VirtualDevice } from '../devices/virtual-device.entity.js';
import { PermissionScope } from '../permission-scopes/permission-scope.entity.js';
import { newId } from '../platform/crypto/ids.js';

/**
 * One message queued to a device (docs/lorawan.md, Downlinks). `queued` until the connector's
 * broker published it (`sent`) or the network server reports it sent; `acknowledged` or `failed`
 * end it. While `nextAttemptAt` is set, the queue worker still has to hand it to the connector;
 * null once handed over (the network server's events move it on) or ended.
 */
export class Downlink {
  id: string = newId();
  account!: Account;
  /** The device's scope when it was queued; who may see it is decided through the device. */
  permissionScope: PermissionScope | null = null;
  device!: VirtualDevice;
  connector!: Connector;
  /** The device's `device_id` on the connector, as network-server events name it. */
  deviceKey!: string;
  /** The LoRaWAN port; null for connectors that carry none (MQTT, WebSocket, …). */
  fPort: number | null = null;
  payload!: Buffer;
  confirmed = false;
  status: DownlinkStatus = 'queued';
  /** Why it failed, or the last transient failure while it is retried. */
  error: string | null = null;
  /** The network server's id of the queued item (ChirpStack queue item id). */
  remoteId: string | null = null;
  attempts = 0;
  nextAttemptAt: Date | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
  handedOverAt: Date | null = null;
  sentAt: Date | null = null;
  acknowledgedAt: Date | null = null;
  /** `user:<id>`, `apiKey:<id>` or `rule:<id>`. */
  createdBy: string | null = null;
}

export const DownlinkSchema = new EntitySchema<Downlink>({
  class: Downlink,
  tableName: 'downlinks',
  indexes: [
    { properties: ['device', 'createdAt'] },
    { properties: ['connector', 'remoteId'] },
    { properties: ['nextAttemptAt'] },
  ],
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade', index: true },
    permissionScope: {
      kind: 'm:1',
      entity: () => PermissionScope,
      nullable: true,
      deleteRule: 'set null',
      index: true,
    },
    device: { kind: 'm:1', entity: () => VirtualDevice, deleteRule: 'cascade' },
    connector: { kind: 'm:1', entity: () => Connector, deleteRule: 'cascade' },
    deviceKey: { type: 'string', length: 200 },
    fPort: { type: 'smallint', nullable: true },
    payload: { type: 'blob', columnType: 'bytea' },
    confirmed: { type: 'boolean', default: false },
    status: { type: 'string', length: 16 },
    error: { type: 'string', length: 1000, nullable: true },
    remoteId: { type: 'string', length: 200, nullable: true },
    attempts: { type: 'integer', default: 0 },
    nextAttemptAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
    handedOverAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    sentAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    acknowledgedAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    createdBy: { type: 'string', length: 100, nullable: true },
  },
});
