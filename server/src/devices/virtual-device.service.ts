import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { Connector } from '../connectors/connector.entity.js';
import { DeviceDriver } from '../drivers/device-driver.entity.js';
import type { PermissionScopeService } from '../permission-scopes/permission-scope.service.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import type { SecretBox } from '../platform/crypto/secret-box.js';
import { errors, type AppError } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { learnCommonWords } from '../platform/http/common-words.js';
import { keysetPage, type Execute } from '../platform/http/list-sql.js';
import type { DeviceTemplateService } from '../templates/device-template.service.js';
import { applyTemplate } from '../templates/template-sync.js';
import {
  checkHealthConfig,
  connectorUsableIn,
  driverUsableIn,
  applyIdentityRules,
  deviceIdProblem,
  identityRulesOf,
} from './device-references.js';
import {
  deviceFilterSql,
  deviceSearchSql,
  deviceSearchText,
  deviceSearchTexts,
  healthStateIsSql,
  type DeviceCondition,
} from './virtual-device.filter.js';
import { DELETING, reactivate } from './device-lifecycle.js';
import { VirtualDevice, type ActivationMethod } from './virtual-device.entity.js';
import { SORT_COLUMNS } from './virtual-device.order.js';
import { DEVICE_COLUMNS, deviceFromRow, type DeviceFields } from './virtual-device.rows.js';

export interface VirtualDeviceInput {
  device_id?: string;
  title?: string;
  description?: string;
  active?: boolean;
  connectorId?: string | null;
  deviceDriverId?: string | null;
  deviceTemplateId?: string | null;
  parentId?: string | null;
  permissionScopeId?: string | null;
  tags?: string[];
  groups?: string[];
  keyValueData?: Record<string, unknown>;
  externalId?: string | null;
  referenceId?: string | null;
  targetReferenceId?: string | null;
  operationalStatus?: number | null;
  activationMethod?: ActivationMethod;
  skipFrameCounterCheck?: boolean;
  devEui?: string | null;
  endDeviceId?: string | null;
  application_session_key?: string | null;
  network_session_key?: string | null;
  healthConfig?: unknown;
  /** Back from `Deleting` or a failed remote deletion (spec: "Reactivation is possible"). */
  reactivate?: boolean;
}

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

const configNotAssigned = (what: string, id: string, path: string) =>
  errors.unprocessable('CONFIG_NOT_ASSIGNED', `${what} ${id} is not available in this account`, [
    problem(path, 'notFound', { id }),
  ]);

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

  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly permissionScopes: PermissionScopeService,
    private readonly templates: DeviceTemplateService,
    private readonly secretBox: SecretBox,
  ) {}

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
    await this.apply(principal, device, input, true);
    await this.em().persistAndFlush(device);
    return device;
  }

  async update(principal: Principal, id: string, input: VirtualDeviceInput): Promise<VirtualDevice> {
    const device = await this.get(principal, id);
    const scopeBefore = device.permissionScope?.id ?? null;
    await this.apply(principal, device, input, false);
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
      this.link(device, template);
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

  private link(device: VirtualDevice, template: Awaited<ReturnType<DeviceTemplateService['get']>>): void {
    if (!device.driver && !template.driver) {
      throw errors.unprocessable(
        'DEVICE_WITHOUT_DRIVER',
        `Device ${device.id} has no device driver and the template supplies none; assign a driver first`,
        [{ deviceId: device.id }],
      );
    }
    device.template = template;
    applyTemplate(device, template);
  }

  /** Applies input to a device; `creating` makes device_id and title required. */
  async apply(
    principal: Principal,
    device: VirtualDevice,
    input: VirtualDeviceInput,
    creating: boolean,
  ): Promise<void> {
    const em = this.em();
    const account = device.account;
    // A stored device keeps working through edits that leave its id and connector alone.
    const connectorBefore = device.connector?.id;
    const deviceIdBefore = device.deviceId;
    if (input.title !== undefined) device.title = input.title.trim();
    if (!device.title) throw errors.validation('title is required', [problem('/title', 'required')]);
    if (input.description !== undefined) device.description = input.description;
    if (input.active !== undefined) device.active = input.active;
    if (input.tags !== undefined) device.tags = [...new Set(input.tags)];
    if (input.keyValueData !== undefined) device.keyValueData = input.keyValueData;
    for (const field of ['externalId', 'referenceId', 'targetReferenceId', 'endDeviceId'] as const) {
      if (input[field] !== undefined) device[field] = input[field] || null;
    }
    if (input.operationalStatus !== undefined) device.operationalStatus = input.operationalStatus;
    if (input.activationMethod !== undefined) device.activationMethod = input.activationMethod;
    if (input.skipFrameCounterCheck !== undefined) device.skipFrameCounterCheck = input.skipFrameCounterCheck;
    if (input.devEui !== undefined) device.devEui = input.devEui || null;
    // Session keys: only a non-empty value replaces them, so a round-tripped device never clears them.
    if (input.application_session_key)
      device.applicationSessionKeySealed = this.secretBox.seal(input.application_session_key);
    if (input.network_session_key)
      device.networkSessionKeySealed = this.secretBox.seal(input.network_session_key);

    if (input.connectorId !== undefined) {
      if (input.connectorId === null) device.connector = null;
      else {
        const connector = await em.findOne(Connector, { id: input.connectorId }, { populate: ['account'] });
        if (!connector || !canReach(principal, connector.account) || !connectorUsableIn(connector, account)) {
          throw configNotAssigned('Connector', input.connectorId, '/connectorId');
        }
        device.connector = connector;
      }
    }
    if (input.deviceDriverId !== undefined) {
      if (input.deviceDriverId === null) device.driver = null;
      else {
        const driver = await em.findOne(
          DeviceDriver,
          { id: input.deviceDriverId },
          { populate: ['account'] },
        );
        if (!driver || !driverUsableIn(driver, account)) {
          throw configNotAssigned('Device driver', input.deviceDriverId, '/deviceDriverId');
        }
        device.driver = driver;
      }
    }
    if (input.healthConfig !== undefined) {
      const driver = device.driver ? await em.findOne(DeviceDriver, { id: device.driver.id }) : null;
      device.healthConfig = checkHealthConfig(input.healthConfig, driver?.targetVariables);
    }
    if (input.parentId !== undefined) {
      if (input.parentId === null) device.parent = null;
      else {
        const parent = await em.findOne(VirtualDevice, { id: input.parentId, account });
        if (
          !parent ||
          parent.id === device.id ||
          !scopeFilter(principal).allows(parent.permissionScope?.id)
        ) {
          throw configNotAssigned('Parent device', input.parentId, '/parentId');
        }
        device.parent = parent;
      }
    }
    if (input.permissionScopeId !== undefined) {
      device.permissionScope =
        input.permissionScopeId === null
          ? null
          : ((
              await this.permissionScopes.assignable(
                principal,
                account,
                [input.permissionScopeId],
                (id): AppError => configNotAssigned('Permission scope', id, '/permissionScopeId'),
              )
            )[0] ?? null);
    }
    if (input.groups !== undefined) {
      const managed = device.template?.groups ?? [];
      const removed = managed.filter((g) => !input.groups!.includes(g));
      if (removed.length > 0) {
        throw errors.unprocessable(
          'TEMPLATE_MANAGED_GROUP',
          `Groups managed by the device template cannot be removed: ${removed.join(', ')}`,
          [{ path: '/groups', groups: removed }],
        );
      }
      device.groups = [...new Set(input.groups)];
    }
    if (input.deviceTemplateId !== undefined && input.deviceTemplateId !== (device.template?.id ?? null)) {
      if (input.deviceTemplateId === null) device.template = null;
      else {
        const template = await this.templates.usableIn(account, input.deviceTemplateId);
        if (!template)
          throw configNotAssigned('Device template', input.deviceTemplateId, '/deviceTemplateId');
        this.link(device, template);
      }
    }
    if (input.device_id !== undefined) device.deviceId = input.device_id.trim();
    if (!device.deviceId)
      throw errors.validation('device_id is required', [problem('/device_id', 'required')]);
    const identityChanged =
      creating || device.connector?.id !== connectorBefore || device.deviceId !== deviceIdBefore;
    this.normaliseForConnector(device, creating, identityChanged);
    await this.assertDeviceIdFree(device);
  }

  /**
   * The connector kind's identity rules (EUI case, EndDevice ID, required fields); 400 for a missing
   * field, and for a device_id the kind cannot take when it or the connector is new.
   */
  private normaliseForConnector(device: VirtualDevice, creating: boolean, identityChanged: boolean): void {
    const type = device.connector?.type;
    const rules = identityRulesOf(type);
    const topicProblem = identityChanged ? deviceIdProblem(device.deviceId, rules) : null;
    if (topicProblem)
      throw errors.validation(topicProblem, [
        problem('/device_id', 'format', { format: 'mqtt-topic-level' }),
      ]);
    const missing = applyIdentityRules(device, rules, creating);
    if (missing.length > 0) {
      throw errors.validation(
        `A device on a ${type} connector needs ${missing.join(', ')}`,
        missing.map((field) => problem(`/${field}`, 'required')),
      );
    }
  }

  /** `device_id` is unique per connector (per account for devices without one): 409 otherwise. */
  private async assertDeviceIdFree(device: VirtualDevice): Promise<void> {
    const clash = await this.em().count(VirtualDevice, {
      deviceId: device.deviceId,
      id: { $ne: device.id },
      ...(device.connector ? { connector: device.connector } : { connector: null, account: device.account }),
    });
    if (clash > 0) {
      throw errors.conflict(
        'DEVICE_ID_TAKEN',
        `device_id "${device.deviceId}" is already used on this connector`,
        [problem('/device_id', 'unique', { value: device.deviceId })],
      );
    }
  }
}
