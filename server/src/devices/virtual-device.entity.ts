import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';
import { Account } from '../accounts/account.entity.js';
import { Connector } from '../connectors/connector.entity.js';
import { DeviceDriver, type HealthConfig } from '../drivers/device-driver.entity.js';
import { DeviceTemplate } from '../templates/device-template.entity.js';
import { PermissionScope } from '../permission-scopes/permission-scope.entity.js';
import type { Schedule } from '../platform/schedule.js';

export type ActivationMethod = 'OTAA' | 'ABP';

/** Default and the only value while a device has received no packet. */
export const HEALTH_UNKNOWN = 'Unknown';

/** A device of any connectivity type, addressed by its connector and `device_id`. */
export class VirtualDevice {
  id: string = newId();
  account!: Account;
  connector: Connector | null = null;
  driver: DeviceDriver | null = null;
  template: DeviceTemplate | null = null;
  parent: VirtualDevice | null = null;
  permissionScope: PermissionScope | null = null;
  /** The spec's `device_id`: the id the device uses on its connector (topic segment, payload field). */
  deviceId!: string;
  title!: string;
  /** false: deactivated; its packets are stored in the history but not parsed, routed or counted as failed. */
  active = true;
  description = '';
  tags: string[] = [];
  groups: string[] = [];
  keyValueData: Record<string, unknown> = {};
  externalId: string | null = null;
  referenceId: string | null = null;
  targetReferenceId: string | null = null;
  operationalStatus: number | null = null;
  activationMethod: ActivationMethod = 'OTAA';
  skipFrameCounterCheck = false;
  devEui: string | null = null;
  endDeviceId: string | null = null;
  /** LoRaWAN session keys, sealed; a device update never overwrites them. */
  applicationSessionKeySealed: string | null = null;
  networkSessionKeySealed: string | null = null;
  healthState: string = HEALTH_UNKNOWN;
  /** The device's own health rules (manual); null: its driver's (default). docs/device-health.md */
  healthConfig: HealthConfig | null = null;
  /** Why the health is what it is (the rule that matched, silence …), from the last evaluation. */
  healthReason: string | null = null;
  healthCheckedAt: Date | null = null;
  /** Next scheduled evaluation; null until the health scheduler places the device in its slot. */
  healthNextCheckAt: Date | null = null;
  /** Own schedule of manual health rules (cron or interval); null: the device's daily slot. */
  healthSchedule: Schedule | null = null;
  /** Where an interval schedule's grid starts (set when the schedule is saved). */
  healthScheduleAnchor: Date | null = null;
  lastSeen: Date | null = null;
  /** `Deleting` while the network server removes it, `DeletionFailed` when it could not (device-lifecycle.ts). */
  lifecycleState: string | null = null;
  /** Why the network server did not remove it. */
  lifecycleReason: string | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

/**
 * What the list's free-text search looks in: title, device_id, EUI, external id and reference id
 * joined by a unit separator (never part of a search text), so one trigram index answers a substring
 * search over all five (docs/adr/0121-lists-at-scale.md). The index `virtual_devices_search` holds
 * this very expression: a change here needs a migration that builds the index again.
 */
export const DEVICE_SEARCH_TEXT = (alias: string) =>
  `(${alias}.title || chr(31) || ${alias}.device_id || chr(31) || coalesce(${alias}.dev_eui, '') || chr(31) || coalesce(${alias}.external_id, '') || chr(31) || coalesce(${alias}.reference_id, ''))`;

export const VirtualDeviceSchema = new EntitySchema<VirtualDevice>({
  class: VirtualDevice,
  tableName: 'virtual_devices',
  uniques: [{ properties: ['connector', 'deviceId'] }],
  indexes: [
    // The list's orders: `(account_id, key, id)` serves a page of any depth in either direction
    // (platform/http/list-sql.ts); text sorts ignore case.
    {
      name: 'virtual_devices_list_title',
      expression:
        'create index "virtual_devices_list_title" on "virtual_devices" ("account_id", lower("title") nulls first, "id") include ("title")',
    },
    {
      name: 'virtual_devices_list_device_id',
      expression:
        'create index "virtual_devices_list_device_id" on "virtual_devices" ("account_id", lower("device_id") nulls first, "id") include ("device_id")',
    },
    {
      name: 'virtual_devices_list_created_at',
      expression:
        'create index "virtual_devices_list_created_at" on "virtual_devices" ("account_id", "created_at" nulls first, "id")',
    },
    {
      name: 'virtual_devices_list_updated_at',
      expression:
        'create index "virtual_devices_list_updated_at" on "virtual_devices" ("account_id", "updated_at" nulls first, "id")',
    },
    {
      name: 'virtual_devices_list_health_state',
      expression:
        'create index "virtual_devices_list_health_state" on "virtual_devices" ("account_id", "health_state" nulls first, "id")',
    },
    {
      name: 'virtual_devices_list_operational_status',
      expression:
        'create index "virtual_devices_list_operational_status" on "virtual_devices" ("account_id", "operational_status" nulls first, "id")',
    },
    {
      name: 'virtual_devices_key_values',
      expression:
        'create index "virtual_devices_key_values" on "virtual_devices" using gin ("key_value_data" jsonb_path_ops)',
    },
    {
      name: 'virtual_devices_tags',
      expression: 'create index "virtual_devices_tags" on "virtual_devices" using gin ("tags")',
    },
    {
      name: 'virtual_devices_search',
      expression: `create index "virtual_devices_search" on "virtual_devices" using gin (${DEVICE_SEARCH_TEXT('virtual_devices').replaceAll('virtual_devices.', '')} gin_trgm_ops)`,
    },
    { properties: ['referenceId'] },
    // LoRaWAN packets name their device by EUI, which may differ from its device_id (resolve-device.stage.ts).
    { name: 'virtual_devices_connector_id_dev_eui_index', properties: ['connector', 'devEui'] },
  ],
  properties: {
    id: { type: 'uuid', primary: true },
    account: { kind: 'm:1', entity: () => Account, deleteRule: 'cascade' },
    connector: { kind: 'm:1', entity: () => Connector, nullable: true, deleteRule: 'restrict', index: true },
    driver: { kind: 'm:1', entity: () => DeviceDriver, nullable: true, deleteRule: 'restrict', index: true },
    template: {
      kind: 'm:1',
      entity: () => DeviceTemplate,
      nullable: true,
      deleteRule: 'set null',
      index: true,
    },
    parent: { kind: 'm:1', entity: () => VirtualDevice, nullable: true, deleteRule: 'set null', index: true },
    permissionScope: {
      kind: 'm:1',
      entity: () => PermissionScope,
      nullable: true,
      deleteRule: 'restrict',
      index: true,
    },
    deviceId: { type: 'string', length: 200 },
    title: { type: 'string', length: 200 },
    active: { type: 'boolean', default: true },
    description: { type: 'text' },
    tags: { type: 'text[]' },
    groups: { type: 'text[]' },
    keyValueData: { type: 'json' },
    externalId: { type: 'string', length: 200, nullable: true },
    referenceId: { type: 'string', length: 200, nullable: true },
    targetReferenceId: { type: 'string', length: 200, nullable: true },
    operationalStatus: { type: 'integer', nullable: true },
    activationMethod: { type: 'string', length: 8 },
    skipFrameCounterCheck: { type: 'boolean', default: false },
    devEui: { type: 'string', length: 32, nullable: true },
    endDeviceId: { type: 'string', length: 100, nullable: true },
    applicationSessionKeySealed: { type: 'text', nullable: true, hidden: true },
    networkSessionKeySealed: { type: 'text', nullable: true, hidden: true },
    healthState: { type: 'string', length: 40 },
    healthConfig: { type: 'json', nullable: true },
    healthReason: { type: 'string', length: 300, nullable: true },
    healthCheckedAt: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    healthNextCheckAt: { type: 'datetime', columnType: 'timestamptz', nullable: true, index: true },
    healthSchedule: { type: 'json', nullable: true },
    healthScheduleAnchor: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    lastSeen: { type: 'datetime', columnType: 'timestamptz', nullable: true },
    lifecycleState: { type: 'string', length: 20, nullable: true },
    lifecycleReason: { type: 'string', length: 500, nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});

/** The current value of one state of a device (`_raw`, `_parsed`, target variables). */
export class DeviceState {
  device!: VirtualDevice;
  key!: string;
  value: unknown = null;
  timestamp: Date = new Date();
  /** Packet that produced the value, for tracing. */
  packetId: string | null = null;
}

export const DeviceStateSchema = new EntitySchema<DeviceState>({
  class: DeviceState,
  tableName: 'device_states',
  properties: {
    device: { kind: 'm:1', entity: () => VirtualDevice, primary: true, deleteRule: 'cascade' },
    key: { type: 'string', length: 200, primary: true },
    value: { type: 'json', nullable: true },
    timestamp: { type: 'datetime', columnType: 'timestamptz' },
    packetId: { type: 'bigint', nullable: true },
  },
});
