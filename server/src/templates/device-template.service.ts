import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { DeviceDriver } from '../drivers/device-driver.entity.js';
import type { JobService } from '../jobs/job.service.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { checkHealthConfig, driverUsableIn } from '../devices/device-references.js';
import { DeviceTemplate } from './device-template.entity.js';
import { TEMPLATE_SYNC_JOB } from './template-sync.js';

export const DEVICE_TEMPLATE_SORTABLE = ['title', 'createdAt', 'updatedAt'] as const;

export interface DeviceTemplateInput {
  title?: string;
  description?: string;
  deviceDriverId?: string | null;
  connectorType?: string | null;
  tags?: string[];
  groups?: string[];
  keyValueData?: Record<string, unknown>;
  healthConfig?: unknown;
}

/**
 * Device templates. Callers have checked deviceTemplate.read/manage; here the account must be
 * reachable. A change is synchronised to the linked devices by a background job; a template
 * cannot be deleted while such a job is queued or running.
 */
export class DeviceTemplateService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly jobs: JobService,
  ) {}

  async list(
    principal: Principal,
    params: ListParams,
    accountId?: string,
  ): Promise<ListResult<DeviceTemplate>> {
    const account = await this.accounts.actingAccount(principal, accountId);
    const where = params.search ? { account, title: { $ilike: likePattern(params.search) } } : { account };
    const [rows, total] = await this.em().findAndCount(DeviceTemplate, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }

  async get(principal: Principal, id: string): Promise<DeviceTemplate> {
    const template = await this.em().findOne(DeviceTemplate, { id }, { populate: ['account', 'driver'] });
    if (!template || !canReach(principal, template.account)) throw errors.notFound('Device template', id);
    return template;
  }

  async create(
    principal: Principal,
    input: DeviceTemplateInput & { accountId?: string },
  ): Promise<DeviceTemplate> {
    const account = await this.accounts.actingAccount(principal, input.accountId);
    const template = new DeviceTemplate();
    template.account = account;
    await this.apply(template, input);
    await this.em().persistAndFlush(template);
    return template;
  }

  /** Saves the change and queues the synchronisation of the linked devices. */
  async update(principal: Principal, id: string, input: DeviceTemplateInput): Promise<DeviceTemplate> {
    const template = await this.get(principal, id);
    await this.apply(template, input);
    await this.em().flush();
    await this.jobs.enqueue({
      account: template.account,
      type: TEMPLATE_SYNC_JOB,
      subjectId: template.id,
      createdByUserId: principal.userId,
    });
    return template;
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const template = await this.get(principal, id);
    const pending = await this.jobs.pendingFor(template.id);
    if (pending.length > 0) {
      throw errors.deleteBlocked(
        'A background job for this device template is queued or running; delete it when the job has ended',
        pending.map((job) => ({ type: 'job', id: job.id, jobType: job.type, status: job.status })),
      );
    }
    await this.em().removeAndFlush(template);
  }

  /**
   * Copies a template into its own account or another reachable one. The driver goes along only
   * when it is usable in the target account; otherwise the copy has none (`driverDropped`).
   */
  async copy(
    principal: Principal,
    id: string,
    targetAccountId?: string,
  ): Promise<{ template: DeviceTemplate; driverDropped: boolean }> {
    const source = await this.get(principal, id);
    const target = targetAccountId
      ? await this.accounts.reachable(principal, targetAccountId)
      : source.account;
    const copy = new DeviceTemplate();
    copy.account = target;
    copy.title = target.id === source.account.id ? `${source.title} (copy)` : source.title;
    copy.description = source.description;
    copy.connectorType = source.connectorType;
    copy.tags = [...source.tags];
    copy.groups = [...source.groups];
    copy.keyValueData = structuredClone(source.keyValueData);
    copy.healthConfig = source.healthConfig ? structuredClone(source.healthConfig) : null;
    const driverDropped = !!source.driver && !driverUsableIn(source.driver, target);
    copy.driver = driverDropped ? null : source.driver;
    await this.em().persistAndFlush(copy);
    return { template: copy, driverDropped };
  }

  /** A template of exactly this account (templates are never inherited; they are copied). */
  async usableIn(account: Account, id: string): Promise<DeviceTemplate | null> {
    return this.em().findOne(DeviceTemplate, { id, account }, { populate: ['driver'] });
  }

  private async apply(template: DeviceTemplate, input: DeviceTemplateInput): Promise<void> {
    if (input.title !== undefined) template.title = input.title.trim();
    if (!template.title) throw errors.validation('title is required', [problem('/title', 'required')]);
    if (input.description !== undefined) template.description = input.description;
    if (input.connectorType !== undefined) template.connectorType = input.connectorType;
    if (input.tags !== undefined) template.tags = [...new Set(input.tags)];
    if (input.groups !== undefined) template.groups = [...new Set(input.groups)];
    if (input.keyValueData !== undefined) template.keyValueData = input.keyValueData;
    if (input.deviceDriverId !== undefined) {
      if (input.deviceDriverId === null) template.driver = null;
      else {
        const driver = await this.em().findOne(
          DeviceDriver,
          { id: input.deviceDriverId },
          { populate: ['account'] },
        );
        if (!driver || !driverUsableIn(driver, template.account)) {
          throw errors.unprocessable(
            'CONFIG_NOT_ASSIGNED',
            `Device driver ${input.deviceDriverId} is not available in this account`,
            [problem('/deviceDriverId', 'notFound', { id: input.deviceDriverId })],
          );
        }
        template.driver = driver;
      }
    }
    if (input.healthConfig !== undefined) {
      template.healthConfig = checkHealthConfig(input.healthConfig, template.driver?.targetVariables);
    }
  }
}
