import type { Account } from '../accounts/account.entity.js';
import type { PermissionScope } from '../permission-scopes/permission-scope.entity.js';
import { applyTemplate } from '../templates/template-sync.js';
import type { ImportReferences } from './device-import.references.js';
import { applyIdentityRules, deviceIdProblem, identityRulesOf } from './device-references.js';
import { VirtualDevice } from './virtual-device.entity.js';

/** Columns of the import file (docs/virtual-devices.md); `kv.<key>` columns fill keyValueData. */
export const IMPORT_COLUMNS = [
  'device_id',
  'title',
  'description',
  'connectorId',
  'deviceDriverId',
  'deviceTemplateId',
  'permissionScopeId',
  'tags',
  'groups',
  'externalId',
  'referenceId',
  'targetReferenceId',
  'operationalStatus',
  'activationMethod',
  'skipFrameCounterCheck',
  'devEui',
  'endDeviceId',
] as const;

/**
 * Longest text per column, as the create/update API allows (virtual-device.schemas.ts) and never more
 * than the database column holds: a longer cell is a row error naming the column, not a failed INSERT.
 */
export const IMPORT_TEXT_LIMITS: Partial<Record<(typeof IMPORT_COLUMNS)[number], number>> = {
  device_id: 200,
  title: 200,
  description: 5000,
  externalId: 200,
  referenceId: 200,
  targetReferenceId: 200,
  devEui: 32,
  endDeviceId: 100,
};
/** Tags and groups: each label and how many, as the API allows. */
const MAX_LABEL = 100;
const MAX_LABELS = 200;
/** `kv.<key>` columns: key and value lengths, as the API allows. */
const MAX_KV_KEY = 100;
const MAX_KV_VALUE = 2000;

/** One record of the file: its line (header = 1) and its cells by column name. */
export interface ImportRow {
  line: number;
  record: Record<string, string>;
}

/** A bad row: becomes an item error of the job, never stops the others. */
export class RowError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const notAssigned = (what: string, id: string) =>
  new RowError(
    'CONFIG_NOT_ASSIGNED',
    `ConfigNotAssignedError: ${what} ${id.slice(0, 100)} is not assigned to this account`,
  );

/** `connectorId|device_id` (or `-|device_id` without a connector): one device address. */
export const takenKey = (connectorId: string | null | undefined, deviceId: string) =>
  `${connectorId ?? '-'}|${deviceId}`;

const tooLong = (column: string, limit: number, length: number) =>
  new RowError('VALIDATION_ERROR', `${column} is longer than ${limit} characters (${length})`);

/** Length checks of one row, before anything reaches the database. */
function checkLengths(record: Record<string, string>): void {
  for (const [column, value] of Object.entries(record)) {
    // PostgreSQL cannot store NUL in text or JSON.
    if (value.includes('\0')) throw new RowError('VALIDATION_ERROR', `${column} holds a NUL character`);
  }
  for (const [column, limit] of Object.entries(IMPORT_TEXT_LIMITS)) {
    const value = record[column];
    if (value && value.length > limit) throw tooLong(column, limit, value.length);
  }
  for (const column of ['tags', 'groups']) {
    const labels = list(record[column]);
    const long = labels.find((label) => label.length > MAX_LABEL);
    if (long) throw tooLong(`a label in ${column}`, MAX_LABEL, long.length);
    if (labels.length > MAX_LABELS)
      throw new RowError('VALIDATION_ERROR', `${column} holds more than ${MAX_LABELS} labels`);
  }
  for (const [column, value] of Object.entries(record)) {
    if (!column.startsWith('kv.')) continue;
    if (column.length - 3 > MAX_KV_KEY)
      throw tooLong('a kv.<key> column name', MAX_KV_KEY, column.length - 3);
    if (value.length > MAX_KV_VALUE) throw tooLong(column, MAX_KV_VALUE, value.length);
  }
}

/** A device from one row, or a RowError; claims the row's address in `refs` (duplicates in the file). */
export function buildDevice(
  record: Record<string, string>,
  account: Account,
  refs: ImportReferences,
): VirtualDevice {
  checkLengths(record);
  const device = new VirtualDevice();
  device.account = account;
  device.deviceId = record.device_id ?? '';
  device.title = record.title ?? '';
  if (!device.deviceId) throw new RowError('VALIDATION_ERROR', 'device_id is required');
  if (!device.title) throw new RowError('VALIDATION_ERROR', 'title is required');
  device.description = record.description ?? '';
  device.tags = list(record.tags);
  device.groups = list(record.groups);
  for (const [key, value] of Object.entries(record)) {
    if (key.startsWith('kv.') && value !== '') device.keyValueData[key.slice(3)] = value;
  }
  device.externalId = record.externalId || null;
  device.referenceId = record.referenceId || null;
  device.targetReferenceId = record.targetReferenceId || null;
  device.devEui = record.devEui || null;
  device.endDeviceId = record.endDeviceId || null;
  if (record.operationalStatus) {
    const status = Number(record.operationalStatus);
    if (!/^-?\d+$/.test(record.operationalStatus) || status < -(2 ** 31) || status >= 2 ** 31) {
      throw new RowError(
        'VALIDATION_ERROR',
        `operationalStatus must be an integer (32 bits), got "${record.operationalStatus.slice(0, 50)}"`,
      );
    }
    device.operationalStatus = status;
  }
  if (record.activationMethod) {
    const method = record.activationMethod.toUpperCase();
    if (method !== 'OTAA' && method !== 'ABP')
      throw new RowError('VALIDATION_ERROR', 'activationMethod must be OTAA or ABP');
    device.activationMethod = method;
  }
  if (record.skipFrameCounterCheck) {
    if (!/^(true|false)$/i.test(record.skipFrameCounterCheck)) {
      throw new RowError('VALIDATION_ERROR', 'skipFrameCounterCheck must be true or false');
    }
    device.skipFrameCounterCheck = record.skipFrameCounterCheck.toLowerCase() === 'true';
  }
  const pick = <T>(map: Map<string, T | null>, id: string | undefined, what: string): T | null => {
    if (!id) return null;
    const found = map.get(id);
    if (!found) throw notAssigned(what, id);
    return found;
  };
  device.connector = pick(refs.connectors, record.connectorId, 'Connector');
  device.driver = pick(refs.drivers, record.deviceDriverId, 'Device driver');
  if (record.permissionScopeId) {
    if (!refs.scopes.get(record.permissionScopeId))
      throw notAssigned('Permission scope', record.permissionScopeId);
    device.permissionScope = { id: record.permissionScopeId } as PermissionScope;
  }
  const template = pick(refs.templates, record.deviceTemplateId, 'Device template');
  if (template) {
    if (!device.driver && !template.driver) {
      throw new RowError('DEVICE_WITHOUT_DRIVER', 'The device has no driver and the template supplies none');
    }
    device.template = template;
    applyTemplate(device, template);
  }
  const type = device.connector?.type;
  const rules = identityRulesOf(type);
  const problem = deviceIdProblem(device.deviceId, rules);
  if (problem) throw new RowError('VALIDATION_ERROR', problem);
  const missing = applyIdentityRules(device, rules, true);
  if (missing.length > 0) {
    throw new RowError(
      'DEVICE_FIELDS_REQUIRED',
      `A device on a ${type} connector needs ${missing.join(', ')}`,
    );
  }
  const key = takenKey(device.connector?.id, device.deviceId);
  if (refs.taken.has(key)) {
    throw new RowError('DEVICE_ID_TAKEN', `device_id "${device.deviceId}" is already used on this connector`);
  }
  refs.taken.add(key);
  return device;
}

export const list = (text: string | undefined) => [
  ...new Set(
    (text ?? '')
      .split(/[;|]/)
      .map((s) => s.trim())
      .filter(Boolean),
  ),
];

/**
 * One device as a row of IMPORT_INSERT_SQL (device-import.ts): the columns an imported device sets;
 * the others keep their defaults (null).
 */
export const insertRecord = (d: VirtualDevice) => ({
  id: d.id,
  account_id: d.account.id,
  connector_id: d.connector?.id ?? null,
  driver_id: d.driver?.id ?? null,
  template_id: d.template?.id ?? null,
  permission_scope_id: d.permissionScope?.id ?? null,
  device_id: d.deviceId,
  title: d.title,
  description: d.description,
  tags: d.tags,
  groups: d.groups,
  key_value_data: d.keyValueData,
  external_id: d.externalId,
  reference_id: d.referenceId,
  target_reference_id: d.targetReferenceId,
  operational_status: d.operationalStatus,
  activation_method: d.activationMethod,
  skip_frame_counter_check: d.skipFrameCounterCheck,
  dev_eui: d.devEui,
  end_device_id: d.endDeviceId,
  health_state: d.healthState,
  health_config: d.healthConfig,
  created_at: d.createdAt,
  updated_at: d.updatedAt,
});

/** Column types of insertRecord, in its order, for jsonb_to_recordset. */
export const INSERT_RECORD_TYPES =
  'id uuid, account_id uuid, connector_id uuid, driver_id uuid, template_id uuid, permission_scope_id uuid, ' +
  'device_id text, title text, description text, tags text[], groups text[], key_value_data jsonb, ' +
  'external_id text, reference_id text, target_reference_id text, operational_status int, ' +
  'activation_method text, skip_frame_counter_check boolean, dev_eui text, end_device_id text, ' +
  'health_state text, health_config jsonb, created_at timestamptz, updated_at timestamptz';
