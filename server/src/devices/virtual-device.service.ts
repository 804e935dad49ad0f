import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import type { PermissionScopeService } from '../permission-scopes/permission-scope.service.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import type { SecretBox } from '../platform/crypto/secret-box.js';
import { errors } from '../platform/errors.js';
import { listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { learnCommonWords } from '../platform/http/common-words.js';
import { keysetPage, type Execute } from '../platform/http/list-sql.js';
import type { DeviceTemplateService } from '../templates/device-template.service.js';
import {
  configNotAssigned,
  DeviceInputApplier,
  linkDeviceTemplate,
  type VirtualDeviceInput,
} from './device-input.js';
import {
  deviceFilterSql,
  deviceSearchSql,
  deviceSearchText,
  deviceSearchTexts,
  healthStateIsSql,
  type DeviceCondition,
} from './virtual-device.filter.js';
import { DELETING, reactivate } from './device-lifecycle.js';
import { VirtualDevice } from './virtual-device.entity.js';
import { SORT_COLUMNS } from './virtual-device.order.js';
import { DEVICE_COLUMNS, deviceFromRow, type DeviceFields } from './virtual-device.rows.js';

export interface DeviceListFilter {
  accountId?: string;
  connectorId?: string;
  deviceTemplateId?: string;
  deviceDriverId?: string;
  parentId?: string;
  /** As the device shows it: `Unknown` until its first packet (HEALTH_STATE_SQL). */
  healthState?: string;
  conditions: DeviceCondition[];
}

/** Something that may refuse a device deletion (e.g. states used in twin aggregations). */
export type DeviceDeletionGuard = (device: VirtualDevice) => Promise<unknown[]>;

/**
 * Virtual devices. Callers have checked VirtualDevice.read / virtualDevice.manage; here the
 * account must be reachable and the device visible through the caller's permission scopes.
 */
export class VirtualDeviceService {
  /** Extension point: twins register a guard so devices feeding aggregations are not deleted. */
  readonly deletionGuards: DeviceDeletionGuard[] = [];
  /** Told after a device was marked `Deleting`: the network server should remove it (device-lifecycle.ts). */
  readonly remoteDeletionListeners: Array<(deviceId: string) => void> = [];
  /** Told after a device changed its permission scope: who may see it may have changed. */
  readonly visibilityListeners: Array<() => void> = [];

  /** Checks and applies create/update input (also used by bulk edits). */
  readonly input: DeviceInputApplier;

  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    permissionScopes: PermissionScopeService,
    private readonly templates: DeviceTemplateService,
    secretBox: SecretBox,
  ) {
    this.input = new DeviceInputApplier(em, permissionScopes, templates, secretBox);
  }

  async list(
    principal: Principal,
    params: ListParams,
    filter: DeviceListFilter,
    after?: string,
  ): Promise<ListResult<DeviceFields>> {
    const accountId = await this.accounts.actingAccountId(principal, filter.accountId);
    const execute: Execute = async <T>(sql: string, values: unknown[]) =>
      (await this.em().getConnection().execute(sql, values)) as unknown as T;
    await learnCommonWords(
      execute,
      deviceSearchText('d'),
      deviceSearchTexts(filter.conditions, params.search),
    );
    const where = this.whereSql(principal, { id: accountId }, filter, params.search);
    const page = await keysetPage<Record<string, unknown> & { id: string }>(execute, params, {
      table: 'virtual_devices',
      alias: 'd',
      columns: SORT_COLUMNS,
      where,
      after,
      select: DEVICE_COLUMNS,
      wholeAccount: !where.filtered && !scopeFilter(principal).restricted ? accountId : undefined,
    });
    return listResult(page.rows.map(deviceFromRow), page.total, params, page.more);
  }

  /**
   * The visible devices of `account` that match the filter, as parameterised SQL on alias `d`;
   * `filtered` when anything beyond the account and the caller's scopes narrows it.
   */
  whereSql(
    principal: Principal,
    account: Pick<Account, 'id'>,
    filter: Omit<DeviceListFilter, 'accountId'>,
    search?: string,
  ): { sql: string; params: unknown[]; filtered: boolean } {
    const parts: Array<{ sql: string; params: unknown[] }> = [
      { sql: 'd.account_id = ?', params: [account.id] },
      scopeFilter(principal).sql('d.permission_scope_id'),
    ];
    const unfiltered = parts.length;
    if (filter.connectorId) parts.push({ sql: 'd.connector_id = ?', params: [filter.connectorId] });
    if (filter.deviceTemplateId) parts.push({ sql: 'd.template_id = ?', params: [filter.deviceTemplateId] });
    if (filter.deviceDriverId) parts.push({ sql: 'd.driver_id = ?', params: [filter.deviceDriverId] });
    if (filter.parentId) parts.push({ sql: 'd.parent_id = ?', params: [filter.parentId] });
    if (filter.healthState) parts.push(healthStateIsSql('d', filter.healthState));
    parts.push(...deviceFilterSql('d', filter.conditions));
    if (search) parts.push(deviceSearchSql('d', search));
    return {
      sql: parts.map((p) => `(${p.sql})`).join(' AND '),
      params: parts.flatMap((p) => p.params),
      filtered: parts.length > unfiltered,
    };
  }

  async get(principal: Principal, id: string): Promise<VirtualDevice> {
    const notFound = () => errors.notFound('Virtual device', id);
    const device = await this.em().findOne(
      VirtualDevice,
      { id },
      { populate: ['account', 'connector', 'template'] },
    );
    if (!device || !canReach(principal, device.account)) throw notFound();
    scopeFilter(principal).assertVisible(device.permissionScope?.id, notFound);
    return device;
  }

  async create(
    principal: Principal,
    input: VirtualDeviceInput & { accountId?: string },
  ): Promise<VirtualDevice> {
    const account = await this.accounts.actingAccount(principal, input.accountId);
    const device = new VirtualDevice();
    device.account = account;
    if (input.permissionScopeId === undefined && scopeFilter(principal).restricted) {
      // A restricted caller could never see a device without a scope: give it the caller's first.
      input = { ...input, permissionScopeId: principal.permissionScopeIds![0] ?? null };
    }
    await this.input.apply(principal, device, input, true);
    await this.em().persistAndFlush(device);
    return device;
  }

  async update(principal: Principal, id: string, input: VirtualDeviceInput): Promise<VirtualDevice> {
    const device = await this.get(principal, id);
    const scopeBefore = device.permissionScope?.id ?? null;
    await this.input.apply(principal, device, input, false);
    if (input.reactivate) reactivate(device);
    await this.em().flush();
    if ((device.permissionScope?.id ?? null) !== scopeBefore)
      for (const listener of this.visibilityListeners) listener();
    return device;
  }

  /** `remote`: the network server should remove it too; the device then stays in `Deleting`. */
  async delete(principal: Principal, id: string, remote = false): Promise<VirtualDevice | null> {
    const device = await this.get(principal, id);
    const blockers = (await Promise.all(this.deletionGuards.map((guard) => guard(device)))).flat();
    if (blockers.length > 0) throw errors.deleteBlocked('The device is still in use', blockers);
    if (remote) {
      device.lifecycleState = DELETING;
      device.lifecycleReason = null;
      await this.em().flush();
      for (const listener of this.remoteDeletionListeners) listener(device.id);
      return device;
    }
    await this.em().removeAndFlush(device);
    return null;
  }

  /** Links devices to a template; each needs a driver (its own or the template's). */
  async linkTemplate(
    principal: Principal,
    templateId: string,
    deviceIds: string[],
  ): Promise<VirtualDevice[]> {
    const template = await this.templates.get(principal, templateId);
    const devices: VirtualDevice[] = [];
    for (const id of [...new Set(deviceIds)]) {
      const device = await this.get(principal, id);
      if (device.account.id !== template.account.id) {
        throw configNotAssigned('Device template', template.id, '/deviceIds');
      }
      linkDeviceTemplate(device, template);
      devices.push(device);
    }
    await this.em().flush();
    return devices;
  }

  async unlinkTemplate(principal: Principal, id: string): Promise<VirtualDevice> {
    const device = await this.get(principal, id);
    device.template = null;
    await this.em().flush();
    return device;
  }
}
