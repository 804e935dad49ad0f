import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import type { Account } from '../accounts/account.entity.js';
import { actorOf, type AuditService } from '../audit/audit.service.js';
import { Connector } from '../connectors/connector.entity.js';
import { MAIL_KIND_TYPES } from '../connectors/kinds/index.js';
import { recordedWithin, recordScopes, seesRecorded } from '../permission-scopes/recorded-scopes.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { nextRun, scheduleDetail } from '../platform/schedule.js';
import { isKnownTimeZone } from '../timeseries/query/query.time.js';
import { ExportPlan } from './export-plan.entity.js';
import {
  SUBJECT_FIELDS,
  subjectOf,
  type ExportDefinition,
  type ExportFormat,
  type ExportRange,
  type ExportSelection,
  type ExportShape,
} from './export-plan.types.js';
import { isRangeTime, resolveRange } from './export-range.js';

export const EXPORT_PLAN_SORTABLE = ['title', 'createdAt', 'updatedAt', 'nextRunAt', 'lastRunAt'] as const;

export interface ExportPlanInput {
  title?: string;
  selection?: ExportSelection;
  range?: ExportRange;
  timeZone?: string;
  shape?: ExportShape;
  format?: ExportFormat;
  mailConnectorId?: string | null;
  mailTo?: string[];
  schedule?: string | null;
}

/** Why a definition cannot run, as a validation error; the schema has checked the shapes. */
export function checkDefinition(
  def: Pick<ExportDefinition, 'selection' | 'range' | 'timeZone'> & { shape?: ExportShape },
): void {
  if (!isKnownTimeZone(def.timeZone))
    throw errors.validation(`Unknown time zone "${def.timeZone}"`, [
      problem('/timeZone', 'format', { format: 'time-zone' }),
    ]);
  const subject = subjectOf(def);
  // Twins have no type (a device's type is its driver); devices have no address and no twin subtree.
  if (subject === 'devices' && def.shape?.address)
    throw errors.validation('Devices have no address: export their geolocation instead', [
      { path: '/shape/address' },
    ]);
  def.selection.conditions.forEach((c, i) => {
    if (!SUBJECT_FIELDS[subject].includes(c.field))
      throw errors.validation(
        `${subject === 'twins' ? 'Twins' : 'Devices'} have no condition field "${c.field}" (${SUBJECT_FIELDS[subject].join(', ')})`,
        [problem(`/selection/conditions/${i}/field`, 'enum', { allowedValues: SUBJECT_FIELDS[subject] })],
      );
    if (c.field === 'property' && !c.key)
      throw errors.validation('A property condition names its property in key', [
        problem(`/selection/conditions/${i}/key`, 'required'),
      ]);
  });
  if ('from' in def.range) {
    for (const end of ['from', 'to'] as const)
      if (!isRangeTime(def.range[end]))
        throw errors.validation(
          `range.${end} must be a local date-time (2026-10-01T00:00) or an ISO instant`,
          [problem(`/range/${end}`, 'format', { format: 'date-time' })],
        );
    const { from, to } = resolveRange(def.range, def.timeZone, new Date());
    if (!(from < to)) throw errors.validation('range.from must be before range.to', [{ path: '/range' }]);
  }
}

/**
 * Export plans of an account. Callers have checked exportPlan.read / exportPlan.manage; the
 * account must be reachable, and a plan records the permission scopes of whoever saved it last
 * (runs export only their twins; a restricted reader sees only plans within its own scopes).
 * Changes are audited.
 */
export class ExportPlanService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly audit: AuditService,
    private readonly clock: () => Date,
  ) {}

  async list(principal: Principal, params: ListParams, accountId?: string): Promise<ListResult<ExportPlan>> {
    const account = await this.accounts.actingAccount(principal, accountId);
    const where = {
      account,
      ...(recordedWithin<ExportPlan>(principal, 'permissionScopeIds') as object),
      ...(params.search ? { title: { $ilike: likePattern(params.search) } } : {}),
    } as FilterQuery<ExportPlan>;
    const [rows, total] = await this.em().findAndCount(ExportPlan, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
      populate: ['mailConnector'],
    });
    return listResult(rows, total, params);
  }

  async get(principal: Principal, id: string): Promise<ExportPlan> {
    const plan = await this.em().findOne(ExportPlan, { id }, { populate: ['account', 'mailConnector'] });
    if (!plan || !canReach(principal, plan.account) || !seesRecorded(principal, plan.permissionScopeIds))
      throw errors.notFound('Export plan', id);
    return plan;
  }

  async create(principal: Principal, input: ExportPlanInput & { accountId?: string }): Promise<ExportPlan> {
    const plan = new ExportPlan();
    plan.account = await this.accounts.actingAccount(principal, input.accountId);
    await this.apply(principal, plan, input);
    this.em().persist(plan);
    await this.audited(principal, plan, 'exportPlan.create');
    return plan;
  }

  async update(principal: Principal, id: string, input: ExportPlanInput): Promise<ExportPlan> {
    const plan = await this.get(principal, id);
    await this.apply(principal, plan, input);
    await this.audited(principal, plan, 'exportPlan.update');
    return plan;
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const plan = await this.get(principal, id);
    this.em().remove(plan);
    await this.audited(principal, plan, 'exportPlan.delete');
  }

  /** Connector deletion guard: plans that mail through this connector. */
  async mailConnectorBlockers(connectorId: string): Promise<unknown[]> {
    const plans = await this.em().find(
      ExportPlan,
      { mailConnector: connectorId },
      { fields: ['id', 'title'], limit: 20 },
    );
    return plans.map((p) => ({ type: 'exportPlan', id: p.id, title: p.title }));
  }

  private async audited(principal: Principal, plan: ExportPlan, action: string): Promise<void> {
    await this.audit.record({
      accountId: plan.account.id,
      actor: actorOf(principal),
      action,
      target: { type: 'exportPlan', id: plan.id },
      details: { title: plan.title },
    });
  }

  private async apply(principal: Principal, plan: ExportPlan, input: ExportPlanInput): Promise<void> {
    if (input.title !== undefined) plan.title = input.title.trim();
    if (!plan.title) throw errors.validation('title is required', [problem('/title', 'required')]);
    if (input.selection !== undefined) plan.selection = input.selection;
    if (input.range !== undefined) plan.range = input.range;
    if (input.timeZone !== undefined) plan.timeZone = input.timeZone;
    if (input.shape !== undefined) plan.shape = input.shape;
    if (input.format !== undefined) plan.format = input.format;
    if (input.mailTo !== undefined) plan.mailTo = [...new Set(input.mailTo)];
    checkDefinition(plan);
    if (input.mailConnectorId !== undefined)
      plan.mailConnector = input.mailConnectorId
        ? await this.mailConnector(plan.account, input.mailConnectorId)
        : null;
    if (input.schedule !== undefined) plan.schedule = input.schedule?.trim() || null;
    if (plan.schedule) {
      const found = scheduleDetail('/schedule', { cron: plan.schedule }, plan.timeZone);
      if (found) throw errors.validation(found.message, [found]);
    }
    const now = this.clock();
    plan.nextRunAt = plan.schedule ? nextRun({ cron: plan.schedule }, plan.timeZone, now, now) : null;
    plan.permissionScopeIds = recordScopes(principal);
  }

  private async mailConnector(account: Account, id: string): Promise<Connector> {
    const connector = await this.em().findOne(Connector, { id, account });
    if (!connector)
      throw errors.unprocessable(
        'CONFIG_NOT_ASSIGNED',
        `Connector ${id} is not a connector of this account`,
        [problem('/mailConnectorId', 'notFound', { id })],
      );
    if (!MAIL_KIND_TYPES.includes(connector.type))
      throw errors.unprocessable(
        'INVALID_MAIL_CONNECTOR',
        `Connector ${id} is a ${connector.type} connector; e-mail needs an ${MAIL_KIND_TYPES.join(' or ')} connector`,
        [{ path: '/mailConnectorId', type: connector.type }],
      );
    return connector;
  }
}
