import { parse } from 'csv-parse/sync';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../accounts/account.entity.js';
import { canReach } from '../accounts/account.service.js';
import type { Principal } from '../auth/principal.js';
import { Connector } from '../connectors/connector.entity.js';
import { DeviceDriver } from '../drivers/device-driver.entity.js';
import type { JobHandler, JobRunContext } from '../jobs/job.types.js';
import { PermissionScope } from '../permission-scopes/permission-scope.entity.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { safeErrorMessage } from '../platform/db/database-errors.js';
import { errors } from '../platform/errors.js';
import { DeviceTemplate } from '../templates/device-template.entity.js';
import { applyTemplate } from '../templates/template-sync.js';
import {
  connectorUsableIn,
  driverUsableIn,
  endDeviceIdFor,
  LORAWAN_CONNECTOR_TYPES,
  THINGS_STACK_CONNECTOR_TYPE,
} from './device-references.js';
import { VirtualDevice } from './virtual-device.entity.js';

export const DEVICE_IMPORT_JOB = 'virtual-device-import';
export const MAX_IMPORT_ROWS = 100_000;
const BATCH = 500;

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

interface ParsedRow {
  line: number;
  record: Record<string, string>;
}

/** Parses and checks the header; malformed files are refused at once (400), rows are checked by the job. */
export function parseImportCsv(csv: string): ParsedRow[] {
  let parsed: Array<{ record: Record<string, string>; info: { lines: number } }>;
  try {
    parsed = parse(csv, { columns: true, info: true, skip_empty_lines: true, trim: true, bom: true });
  } catch (error) {
    throw errors.validation(`The CSV file cannot be read: ${(error as Error).message}`, [{ path: '/csv' }]);
  }
  if (parsed.length === 0) throw errors.validation('The CSV file has no device rows', [{ path: '/csv' }]);
  if (parsed.length > MAX_IMPORT_ROWS) {
    throw errors.validation(`At most ${MAX_IMPORT_ROWS} rows per import`, [{ path: '/csv' }]);
  }
  const unknown = Object.keys(parsed[0]!.record).filter(
    (c) => !(IMPORT_COLUMNS as readonly string[]).includes(c) && !/^kv\..+/.test(c),
  );
  if (unknown.length > 0) {
    throw errors.validation(`Unknown columns: ${unknown.join(', ')}`, [{ path: '/csv', columns: unknown }]);
  }
  return parsed.map((p) => ({ line: p.info.lines, record: p.record }));
}

interface ImportInput {
  csv: string;
  accountId: string;
  principal: Pick<Principal, 'accountId' | 'permissionScopeIds'>;
}

class RowError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const notAssigned = (what: string, id: string) =>
  new RowError(
    'CONFIG_NOT_ASSIGNED',
    `ConfigNotAssignedError: ${what} ${id.slice(0, 100)} is not assigned to this account`,
  );

/**
 * The CSV import job: rows become devices, inserted in batches; a bad row is recorded as an item
 * error (line, code, message) and never stops the others. Not retryable: a rerun after a lost
 * node would report the devices already imported as duplicates.
 */
export const deviceImportJob: JobHandler = {
  type: DEVICE_IMPORT_JOB,
  retryable: false,
  async run(ctx) {
    const input = ctx.job.input as unknown as ImportInput;
    const rows = parseImportCsv(input.csv);
    ctx.setTotal(rows.length);
    const account = await ctx.em.findOneOrFail(Account, { id: input.accountId });
    const refs = await loadReferences(ctx.em, account, rows, input.principal);
    let created = 0;
    for (let i = 0; i < rows.length; i += BATCH) {
      const batch = rows.slice(i, i + BATCH);
      const devices: Array<{ line: number; device: VirtualDevice }> = [];
      for (const row of batch) {
        try {
          devices.push({ line: row.line, device: buildDevice(row.record, account, refs) });
        } catch (error) {
          if (!(error instanceof RowError)) throw error;
          ctx.error({ row: row.line, code: error.code, message: error.message });
          ctx.advance(0, 1);
        }
      }
      created += await insertBatch(ctx, devices);
      await ctx.flush();
    }
    return { created };
  },
};

interface References {
  connectors: Map<string, Connector>;
  drivers: Map<string, DeviceDriver>;
  templates: Map<string, DeviceTemplate>;
  scopes: Set<string>;
  /** `connectorId|device_id` (or `-|device_id` without a connector) already taken. */
  taken: Set<string>;
}

const column = (rows: ParsedRow[], name: string) => [
  ...new Set(rows.map((r) => r.record[name]).filter((v): v is string => !!v && isUuidLike(v))),
];
const isUuidLike = (v: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v);
const takenKey = (connectorId: string | null | undefined, deviceId: string) =>
  `${connectorId ?? '-'}|${deviceId}`;

/** One query per reference kind for the whole file, instead of one per row. */
async function loadReferences(
  em: EntityManager,
  account: Account,
  rows: ParsedRow[],
  principal: ImportInput['principal'],
): Promise<References> {
  const asPrincipal = principal as Principal;
  const connectors = await em.find(
    Connector,
    { id: { $in: column(rows, 'connectorId') } },
    { populate: ['account'] },
  );
  const drivers = await em.find(
    DeviceDriver,
    { id: { $in: column(rows, 'deviceDriverId') } },
    { populate: ['account'] },
  );
  const templates = await em.find(
    DeviceTemplate,
    { id: { $in: column(rows, 'deviceTemplateId') }, account },
    { populate: ['driver'] },
  );
  const filter = scopeFilter(principal);
  const scopes = await em.find(PermissionScope, {
    id: { $in: column(rows, 'permissionScopeId') },
    account: { path: { $contains: [account.id] } },
  });
  const deviceIds = [...new Set(rows.map((r) => r.record.device_id).filter(Boolean))];
  const existing = deviceIds.length
    ? await em
        .getConnection()
        .execute<Array<{ connector_id: string | null; device_id: string; account_id: string }>>(
          'SELECT connector_id, device_id, account_id FROM virtual_devices WHERE device_id IN (?)',
          [deviceIds],
        )
    : [];
  return {
    connectors: new Map(
      connectors
        .filter((c) => canReach(asPrincipal, c.account) && connectorUsableIn(c, account))
        .map((c) => [c.id, c]),
    ),
    drivers: new Map(drivers.filter((d) => driverUsableIn(d, account)).map((d) => [d.id, d])),
    templates: new Map(templates.map((t) => [t.id, t])),
    scopes: new Set(scopes.filter((s) => filter.allows(s.id)).map((s) => s.id)),
    taken: new Set(
      existing
        .filter((e) => e.connector_id !== null || e.account_id === account.id)
        .map((e) => takenKey(e.connector_id, e.device_id)),
    ),
  };
}

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

function buildDevice(record: Record<string, string>, account: Account, refs: References): VirtualDevice {
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
  const pick = <T>(map: Map<string, T>, id: string | undefined, what: string): T | null => {
    if (!id) return null;
    const found = map.get(id);
    if (!found) throw notAssigned(what, id);
    return found;
  };
  device.connector = pick(refs.connectors, record.connectorId, 'Connector');
  device.driver = pick(refs.drivers, record.deviceDriverId, 'Device driver');
  if (record.permissionScopeId) {
    if (!refs.scopes.has(record.permissionScopeId))
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
  if (type && LORAWAN_CONNECTOR_TYPES.has(type) && device.devEui) device.devEui = device.devEui.toLowerCase();
  if (type === THINGS_STACK_CONNECTOR_TYPE && !device.endDeviceId) {
    device.endDeviceId = endDeviceIdFor(device.deviceId, device.devEui);
  }
  const key = takenKey(device.connector?.id, device.deviceId);
  if (refs.taken.has(key)) {
    throw new RowError('DEVICE_ID_TAKEN', `device_id "${device.deviceId}" is already used on this connector`);
  }
  refs.taken.add(key);
  return device;
}

const list = (text: string | undefined) => [
  ...new Set(
    (text ?? '')
      .split(/[;|]/)
      .map((s) => s.trim())
      .filter(Boolean),
  ),
];

const insertRow = (d: VirtualDevice) => ({
  id: d.id,
  account: d.account.id,
  connector: d.connector?.id ?? null,
  driver: d.driver?.id ?? null,
  template: d.template?.id ?? null,
  permissionScope: d.permissionScope?.id ?? null,
  deviceId: d.deviceId,
  title: d.title,
  description: d.description,
  tags: d.tags,
  groups: d.groups,
  keyValueData: d.keyValueData,
  externalId: d.externalId,
  referenceId: d.referenceId,
  targetReferenceId: d.targetReferenceId,
  operationalStatus: d.operationalStatus,
  activationMethod: d.activationMethod,
  skipFrameCounterCheck: d.skipFrameCounterCheck,
  devEui: d.devEui,
  endDeviceId: d.endDeviceId,
  healthState: d.healthState,
  healthConfig: d.healthConfig,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
});

/**
 * One multi-row INSERT per batch. When it fails (a device created concurrently with the same
 * device_id), the batch is retried row by row so only the clashing rows become errors.
 */
async function insertBatch(ctx: JobRunContext, devices: Array<{ line: number; device: VirtualDevice }>) {
  if (devices.length === 0) return 0;
  try {
    await ctx.em.insertMany(
      VirtualDevice,
      devices.map((d) => insertRow(d.device)),
    );
    ctx.advance(devices.length);
    return devices.length;
  } catch {
    let created = 0;
    for (const { line, device } of devices) {
      try {
        await ctx.em.insert(VirtualDevice, insertRow(device));
        ctx.advance(1);
        created++;
      } catch (error) {
        const code = (error as { code?: string }).code === '23505' ? 'DEVICE_ID_TAKEN' : 'IMPORT_ROW_FAILED';
        ctx.error({
          row: line,
          code,
          // The driver's own text is the INSERT with every value of the row: never shown.
          message:
            code === 'DEVICE_ID_TAKEN'
              ? `device_id "${device.deviceId}" is already used`
              : safeErrorMessage(error),
        });
        ctx.advance(0, 1);
      }
    }
    return created;
  }
}
