import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { AccountService } from '../accounts/account.service.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { errors } from '../platform/errors.js';
import { PACKET_STATUS_SQL } from '../ingest/commit-batch.stage.js';
import type { DriverParsing } from '../ingest/driver-parsing.js';
import type { PacketMeta } from '../ingest/packet-meta.js';
import type { DeviceRef } from '../ingest/resolve-device.stage.js';
import type { Job } from '../jobs/job.entity.js';
import type { JobService } from '../jobs/job.service.js';
import { stateDeclarations } from './device-state-types.js';
import { DEVICE_IMPORT_JOB, readImportUpload, type ImportInput, type ImportSource } from './device-import.js';
import { packetMismatches, type ValueMismatch } from './packet-values.js';
import type { VirtualDevice } from './virtual-device.entity.js';
import type { DeviceCondition } from './virtual-device.filter.js';
import type { VirtualDeviceInput } from './device-input.js';
import type { VirtualDeviceService } from './virtual-device.service.js';

export interface StoredPacket {
  id: string;
  receivedAt: Date;
  source: string;
  status: string | null;
  error: string | null;
  /** A payload codec's warnings about the packet. */
  warnings: string[];
  /** Network-server metadata or the MQTT topic (ingest/packet-meta.ts); null when none. */
  meta: PacketMeta | null;
  payload: Buffer;
  /** Values that do not fit the driver's types, checked on read (packet-values.ts); null: not checked. */
  mismatches: ValueMismatch[] | null;
}

export interface BulkTarget {
  ids?: string[];
  filter?: DeviceCondition[];
  search?: string;
  accountId?: string;
}

const MAX_STATISTICS_DAYS = 366;

/**
 * Device reads beyond the record (states, packet history, statistics) and bulk operations.
 * Callers have checked the route permission; every device goes through the same tenancy and
 * scope checks as single reads (`VirtualDeviceService.get` / `whereSql`).
 */
export class VirtualDeviceDataService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly devices: VirtualDeviceService,
    private readonly jobs: JobService,
    private readonly packetHistoryLimit: number,
    private readonly parsing: DriverParsing,
  ) {}

  /**
   * Reads the file off the main thread (400 when unreadable, with unknown columns, too many or no
   * rows) and queues the import job with the file's record batches as its attachment; rows are
   * checked by the job.
   */
  async startImport(principal: Principal, source: ImportSource, accountId?: string): Promise<Job> {
    const account = await this.accounts.actingAccount(principal, accountId);
    const upload = await readImportUpload(source);
    const input: ImportInput = {
      accountId: account.id,
      columns: upload.columns,
      principal: { accountId: principal.accountId, permissionScopeIds: principal.permissionScopeIds },
    };
    return this.jobs.enqueue({
      account,
      type: DEVICE_IMPORT_JOB,
      total: upload.rows,
      createdByUserId: principal.userId,
      input: { ...input },
      attachment: upload.batches,
    });
  }

  /**
   * The device's current states, each with what its driver declares for the key (type, unit,
   * mismatch), and every key the driver declares, sent or not (what a twin state can name before
   * the device's first packet).
   */
  async states(principal: Principal, id: string) {
    const device = await this.devices.get(principal, id);
    if (device.driver) await this.em().populate(device, ['driver']);
    const variables = device.driver?.targetVariables ?? [];
    const declare = stateDeclarations(variables);
    const rows = await this.em()
      .getConnection()
      .execute<Array<{ key: string; value: unknown; timestamp: Date; packet_id: string | null }>>(
        'SELECT key, value, timestamp, packet_id FROM device_states WHERE device_id = ? ORDER BY key',
        [device.id],
      );
    return {
      states: rows.map((row) => ({ ...row, ...declare(row.key, row.value) })),
      declared: variables.map((v) => ({ key: v.key, valueType: v.type, unit: v.unit || null })),
    };
  }

  /**
   * Newest packets first, at most `packetHistoryLimit` in all; `maximumReached` tells the caller
   * that older packets exist beyond what the history shows. Packets are found by the device's
   * address (connector, device_id), as the sender named it (index packets(connector_id, device_key, id));
   * a parsed packet's status is derived from the ingest cursor (ADR 0092). Each packet's values are
   * checked against the device's driver on read (packet-values.ts).
   */
  async packets(principal: Principal, id: string, page: number, pageSize: number) {
    const device = await this.devices.get(principal, id);
    const limit = this.packetHistoryLimit;
    const connection = this.em().getConnection();
    const offset = (page - 1) * pageSize;
    const take = Math.max(0, Math.min(pageSize, limit - offset));
    const address = [device.connector?.id ?? null, device.deviceId];
    const [countRows, rows] = await Promise.all([
      // Counting stops one past the limit: enough to know whether it is reached.
      connection.execute<Array<{ n: string }>>(
        `SELECT count(*) AS n FROM (SELECT 1 FROM packets WHERE connector_id = ? AND device_key = ? LIMIT ?) p`,
        [...address, limit + 1],
      ),
      take === 0
        ? Promise.resolve([])
        : connection.execute<Array<Record<string, unknown>>>(
            `SELECT id, received_at, source, ${PACKET_STATUS_SQL} AS status, error, warnings, meta, payload FROM packets p
              WHERE connector_id = ? AND device_key = ? ORDER BY id DESC LIMIT ? OFFSET ?`,
            [...address, take, offset],
          ),
    ]);
    const count = Number(countRows[0]?.n ?? 0);
    const packets = rows.map((r) => ({
      id: String(r.id),
      receivedAt: new Date(r.received_at as string),
      source: r.source as string,
      status: (r.status as string | null) ?? null,
      error: (r.error as string | null) ?? null,
      warnings: Array.isArray(r.warnings) ? (r.warnings as unknown[]).map(String) : [],
      meta: (r.meta as PacketMeta | null) ?? null,
      payload: r.payload as Buffer,
    }));
    if (device.driver) await this.em().populate(device, ['driver']);
    // Without a connector the device has no address, so no packets to check.
    const mismatches = device.connector
      ? await packetMismatches(
          this.parsing,
          deviceRef(device),
          { connectorId: device.connector.id, deviceKey: device.deviceId },
          packets,
        )
      : [];
    const data: StoredPacket[] = packets.map((p, i) => ({ ...p, mismatches: mismatches[i] ?? null }));
    return {
      data,
      meta: { page, pageSize, total: Math.min(count, limit), limit, maximumReached: count >= limit },
    };
  }

  /** Devices created per day (UTC) in [from, to] and the total of the account. */
  async statistics(principal: Principal, range: { from?: string; to?: string; accountId?: string }) {
    const account = await this.accounts.actingAccount(principal, range.accountId);
    const to = range.to ? new Date(`${range.to}T00:00:00Z`) : startOfUtcDay(new Date());
    const from = range.from ? new Date(`${range.from}T00:00:00Z`) : new Date(to.getTime() - 29 * 86_400_000);
    const days = Math.round((to.getTime() - from.getTime()) / 86_400_000) + 1;
    if (days < 1 || days > MAX_STATISTICS_DAYS) {
      throw errors.validation(`The range must cover 1 to ${MAX_STATISTICS_DAYS} days, from ≤ to`, [
        { path: '/from' },
      ]);
    }
    const scope = scopeFilter(principal).sql('d.permission_scope_id');
    const connection = this.em().getConnection();
    const rows = await connection.execute<Array<{ day: string; n: string }>>(
      `SELECT to_char(g.day, 'YYYY-MM-DD') AS day, count(d.id) AS n
         FROM generate_series(?::date, ?::date, interval '1 day') g(day)
         LEFT JOIN virtual_devices d ON d.account_id = ? AND ${scope.sql}
              AND d.created_at >= g.day AND d.created_at < g.day + interval '1 day'
        GROUP BY g.day ORDER BY g.day`,
      [isoDay(from), isoDay(to), account.id, ...scope.params],
    );
    const [totalRow] = await connection.execute<Array<{ n: string }>>(
      `SELECT count(*) AS n FROM virtual_devices d WHERE d.account_id = ? AND ${scope.sql}`,
      [account.id, ...scope.params],
    );
    const createdPerDay = rows.map((r) => ({ date: r.day, count: Number(r.n) }));
    return {
      accountId: account.id,
      from: isoDay(from),
      to: isoDay(to),
      total: Number(totalRow?.n ?? 0),
      createdInRange: createdPerDay.reduce((sum, d) => sum + d.count, 0),
      createdPerDay,
    };
  }

  /** Applies the same change to many devices, all or nothing (one flush). */
  async bulkEdit(principal: Principal, ids: string[], set: VirtualDeviceInput): Promise<number> {
    const unique = [...new Set(ids)];
    for (const id of unique) {
      const device = await this.devices.get(principal, id);
      const input: VirtualDeviceInput = { ...set };
      // Merge rather than replace: a bulk edit adds custom properties to each device's own.
      if (set.keyValueData) input.keyValueData = { ...device.keyValueData, ...set.keyValueData };
      await this.devices.input.apply(principal, device, input, false);
    }
    await this.em().flush();
    if (set.permissionScopeId !== undefined)
      for (const listener of this.devices.visibilityListeners) listener();
    return unique.length;
  }

  /** Removes tags from the chosen devices (by ids or by filter) in one statement. */
  async bulkDeleteTags(principal: Principal, target: BulkTarget, tags: string[]): Promise<number> {
    const account = await this.accounts.actingAccount(principal, target.accountId);
    const where = this.devices.whereSql(
      principal,
      account,
      { conditions: target.filter ?? [] },
      target.search,
    );
    if (target.ids && target.ids.length === 0) return 0;
    // knex expands array bindings into value lists: `IN (?)` and `ARRAY[?]`, never `= ANY(?)`.
    const idPart = target.ids ? { sql: ' AND d.id IN (?)', params: [target.ids] } : { sql: '', params: [] };
    const result = await this.em()
      .getConnection()
      .execute(
        `UPDATE virtual_devices d
            SET tags = ARRAY(SELECT t FROM unnest(d.tags) WITH ORDINALITY u(t, i) WHERE t NOT IN (?) ORDER BY i),
                updated_at = now()
          WHERE ${where.sql}${idPart.sql} AND d.tags && ARRAY[?]::text[]`,
        [tags, ...where.params, ...idPart.params, tags],
        'run',
      );
    return (result as { affectedRows?: number }).affectedRows ?? 0;
  }
}

/** The device as the ingest stage parses for it (resolve-device.stage.ts); always active here. */
function deviceRef(device: VirtualDevice): DeviceRef {
  const driver = device.driver;
  const ref: DeviceRef = {
    id: device.id,
    accountId: device.account.id,
    permissionScopeId: device.permissionScope?.id ?? null,
    referenceId: device.referenceId,
    driver: driver
      ? {
          id: driver.id,
          updatedAt: driver.updatedAt,
          parser: driver.parser,
          targetVariables: driver.targetVariables,
        }
      : null,
  };
  // The codec's `input.variables`, as ingest hands them over.
  if (driver && Object.keys(device.keyValueData).length > 0) ref.variables = device.keyValueData;
  return ref;
}

const startOfUtcDay = (d: Date) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
const isoDay = (d: Date) => d.toISOString().slice(0, 10);
