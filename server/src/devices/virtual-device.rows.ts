import type { HealthConfig } from '../drivers/device-driver.entity.js';
import type { ActivationMethod, VirtualDevice } from './virtual-device.entity.js';

/**
 * A device as its reply needs it: the entity, or a row read by plain SQL. A list page reads its
 * rows in the statement that picks them and maps them here, because hydrating 50 managed entities
 * cost more CPU than everything else of the request (docs/adr/0121-lists-at-scale.md).
 */
export type DeviceFields = Omit<
  VirtualDevice,
  'account' | 'connector' | 'driver' | 'template' | 'parent' | 'permissionScope'
> & {
  account: { id: string };
  connector: { id: string } | null;
  driver: { id: string } | null;
  template: { id: string } | null;
  parent: { id: string } | null;
  permissionScope: { id: string } | null;
};

/** The columns DEVICE_ROW maps, on alias `d`; the sealed keys only as "is there one". */
export const DEVICE_COLUMNS = `d.id, d.account_id, d.connector_id, d.driver_id, d.template_id, d.parent_id,
  d.permission_scope_id, d.device_id, d.title, d.active, d.description, d.tags, d.groups, d.key_value_data,
  d.external_id, d.reference_id, d.target_reference_id, d.operational_status, d.activation_method,
  d.skip_frame_counter_check, d.dev_eui, d.end_device_id,
  CASE WHEN d.application_session_key_sealed IS NULL THEN NULL ELSE '' END AS application_session_key_sealed,
  CASE WHEN d.network_session_key_sealed IS NULL THEN NULL ELSE '' END AS network_session_key_sealed,
  d.health_state, d.health_config, d.health_reason, d.health_checked_at, d.health_next_check_at,
  d.health_schedule, d.health_schedule_anchor, d.last_seen, d.lifecycle_state, d.lifecycle_reason,
  d.created_at, d.updated_at`;

interface DeviceRow {
  id: string;
  account_id: string;
  connector_id: string | null;
  driver_id: string | null;
  template_id: string | null;
  parent_id: string | null;
  permission_scope_id: string | null;
  device_id: string;
  title: string;
  active: boolean;
  description: string;
  tags: string[];
  groups: string[];
  key_value_data: Record<string, unknown>;
  external_id: string | null;
  reference_id: string | null;
  target_reference_id: string | null;
  operational_status: number | null;
  activation_method: ActivationMethod;
  skip_frame_counter_check: boolean;
  dev_eui: string | null;
  end_device_id: string | null;
  application_session_key_sealed: string | null;
  network_session_key_sealed: string | null;
  health_state: string;
  health_config: HealthConfig | null;
  health_reason: string | null;
  health_checked_at: Date | null;
  health_next_check_at: Date | null;
  health_schedule: VirtualDevice['healthSchedule'];
  health_schedule_anchor: Date | null;
  last_seen: Date | null;
  lifecycle_state: string | null;
  lifecycle_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

const ref = (id: string | null) => (id === null ? null : { id });
/** pg hands timestamptz over as Date; a row that went through JSON has text. */
const date = (value: Date | string | null) => (value === null ? null : new Date(value));

export function deviceFromRow(row: Record<string, unknown>): DeviceFields {
  const r = row as unknown as DeviceRow;
  return {
    id: r.id,
    account: { id: r.account_id },
    connector: ref(r.connector_id),
    driver: ref(r.driver_id),
    template: ref(r.template_id),
    parent: ref(r.parent_id),
    permissionScope: ref(r.permission_scope_id),
    deviceId: r.device_id,
    title: r.title,
    active: r.active,
    description: r.description,
    tags: r.tags,
    groups: r.groups,
    keyValueData: r.key_value_data,
    externalId: r.external_id,
    referenceId: r.reference_id,
    targetReferenceId: r.target_reference_id,
    operationalStatus: r.operational_status,
    activationMethod: r.activation_method,
    skipFrameCounterCheck: r.skip_frame_counter_check,
    devEui: r.dev_eui,
    endDeviceId: r.end_device_id,
    applicationSessionKeySealed: r.application_session_key_sealed,
    networkSessionKeySealed: r.network_session_key_sealed,
    healthState: r.health_state,
    healthConfig: r.health_config,
    healthReason: r.health_reason,
    healthCheckedAt: date(r.health_checked_at),
    healthNextCheckAt: date(r.health_next_check_at),
    healthSchedule: r.health_schedule,
    healthScheduleAnchor: date(r.health_schedule_anchor),
    lastSeen: date(r.last_seen),
    lifecycleState: r.lifecycle_state,
    lifecycleReason: r.lifecycle_reason,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}
