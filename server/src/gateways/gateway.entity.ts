import { EntitySchema } from '@mikro-orm/core';
import { Account } from '../accounts/account.entity.js';
import { Connector } from '../connectors/connector.entity.js';
import { VirtualDevice } from '../devices/virtual-device.entity.js';
import { PermissionScope } from '../permission-scopes/permission-scope.entity.js';
import { newId } from '../platform/crypto/ids.js';

export type GatewayStatus = 'online' | 'offline';

/**
 * A LoRaWAN gateway of an account, addressed by its EUI (lower-case hex, unique per account) and,
 * where the network server names it otherwise (TTS `gateway_id`), by that id too. Online while
 * uplinks or network-server status come through it; offline once silent for its window.
 */
export class Gateway {
  id: string = newId();
  account!: Account;
  permissionScope: PermissionScope | null = null;
  /** The network-server connector it belongs to (imports, gateway status, monitoring rules). */
  connector: Connector | null = null;
  eui!: string;
  /** The network server's own id of the gateway (TTS `gateway_id`); null when only the EUI is used. */
  networkId: string | null = null;
  title!: string;
  description = '';
  tags: string[] = [];
  latitude: number | null = null;
  longitude: number | null = null;
  altitude: number | null = null;
  /** Own offline window; null: STELLWERK_GATEWAY_OFFLINE_AFTER_SECONDS. */
  offlineAfterSeconds: number | null = null;
  status: GatewayStatus = 'offline';
  statusChangedAt: Date | null = null;
  lastSeenAt: Date | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const GatewaySchema = new EntitySchema<Gateway>({
  class: Gateway,
  tableName: 'gateways',
  uniques: [{ properties: ['account', 'eui'] }],
  indexes: [{ properties: ['account', 'networkId'] }, { properties: ['status', 'lastSeenAt'] }],
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade' },
    permissionScope: {
      kind: 'm:1',
      entity: () => PermissionScope,
      nullable: true,
      deleteRule: 'restrict',
      index: true,
    },
    connector: { kind: 'm:1', entity: () => Connector, nullable: true, deleteRule: 'set null', index: true },
    eui: { type: 'string', length: 16 },
    networkId: { type: 'string', length: 100, nullable: true },
    title: { type: 'string', length: 200 },
    description: { type: 'text' },
    tags: { type: 'text[]' },
    latitude: { type: 'double', nullable: true },
    longitude: { type: 'double', nullable: true },
    altitude: { type: 'double', nullable: true },
    offlineAfterSeconds: { type: 'integer', nullable: true },
    status: { type: 'string', length: 8 },
    statusChangedAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    lastSeenAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});

/**
 * Receptions through a gateway in one hour: the 24 h figures are sums over the newest 24 buckets.
 * One row per gateway and hour, upserted once per ingest batch (gateway-receptions.ts).
 */
export class GatewayReceptionHour {
  gateway!: Gateway;
  hour!: Date;
  uplinks = 0;
  rssiSum = 0;
  rssiCount = 0;
  snrSum = 0;
  snrCount = 0;
}

export const GatewayReceptionHourSchema = new EntitySchema<GatewayReceptionHour>({
  class: GatewayReceptionHour,
  tableName: 'gateway_reception_hours',
  indexes: [{ properties: ['hour'] }],
  properties: {
    gateway: { kind: 'm:1', entity: () => Gateway, primary: true, deleteRule: 'cascade' },
    hour: { type: 'datetime', columnType: 'timestamptz', primary: true },
    uplinks: { type: 'integer' },
    rssiSum: { type: 'double' },
    rssiCount: { type: 'integer' },
    snrSum: { type: 'double' },
    snrCount: { type: 'integer' },
  },
});

/** A device a gateway heard: when last, how well, and how often. */
export class GatewayDevice {
  gateway!: Gateway;
  device!: VirtualDevice;
  lastHeardAt!: Date;
  rssi: number | null = null;
  snr: number | null = null;
  uplinks = 0;
}

export const GatewayDeviceSchema = new EntitySchema<GatewayDevice>({
  class: GatewayDevice,
  tableName: 'gateway_devices',
  properties: {
    gateway: { kind: 'm:1', entity: () => Gateway, primary: true, deleteRule: 'cascade' },
    device: { kind: 'm:1', entity: () => VirtualDevice, primary: true, deleteRule: 'cascade', index: true },
    lastHeardAt: { type: 'datetime', columnType: 'timestamptz' },
    rssi: { type: 'double', nullable: true },
    snr: { type: 'double', nullable: true },
    uplinks: { type: 'integer' },
  },
});
