import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { deviceFilterSql, parseDeviceFilter } from '../devices/virtual-device.filter.js';
import type { RecordedScopes } from '../permission-scopes/recorded-scopes.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { twinFilterSql } from '../twins/digital-twin.filter.js';
import { visibleTwinSql } from '../twins/twin-scopes.js';
import { AlarmReport, SmartGroup, type SmartGroupTarget } from './smart-group.entity.js';

export const SMART_GROUP_SORTABLE = ['title', 'createdAt', 'updatedAt'] as const;

export interface SmartGroupInput {
  title?: string;
  target?: SmartGroupTarget;
  filter?: Record<string, string | string[]>;
}

export interface SmartGroupMember {
  id: string;
  title: string;
  healthState?: string;
}

/** Members read per run at most: a report over more says so by its `members` count only. */
const MAX_MEMBERS = 10_000;

/**
 * Smart groups: saved device or twin filters (the list filter syntax, checked when saved). Callers
 * have checked smartGroup.read/manage; the account must be reachable. A group used by an alarm
 * report cannot be deleted (409 DELETE_BLOCKED naming the reports).
 */
export class SmartGroupService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
  ) {}

  async list(principal: Principal, params: ListParams, accountId?: string): Promise<ListResult<SmartGroup>> {
    const account = await this.accounts.actingAccount(principal, accountId);
    const where = params.search ? { account, title: { $ilike: likePattern(params.search) } } : { account };
    const [rows, total] = await this.em().findAndCount(SmartGroup, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }

  async get(principal: Principal, id: string): Promise<SmartGroup> {
    const group = await this.em().findOne(SmartGroup, { id }, { populate: ['account'] });
    if (!group || !canReach(principal, group.account)) throw errors.notFound('Smart group', id);
    return group;
  }

  async create(principal: Principal, input: SmartGroupInput & { accountId?: string }): Promise<SmartGroup> {
    const group = new SmartGroup();
    group.account = await this.accounts.actingAccount(principal, input.accountId);
    this.apply(group, input);
    await this.em().persistAndFlush(group);
    return group;
  }

  async update(principal: Principal, id: string, input: SmartGroupInput): Promise<SmartGroup> {
    const group = await this.get(principal, id);
    this.apply(group, input);
    await this.em().flush();
    return group;
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const group = await this.get(principal, id);
    const reports = await this.em().find(
      AlarmReport,
      { smartGroup: group.id },
      { fields: ['id', 'title'], limit: 20, orderBy: { title: 'asc' } },
    );
    if (reports.length > 0) {
      throw errors.deleteBlocked(
        'The smart group is used by alarm reports',
        reports.map((r) => ({ type: 'alarmReport', id: r.id, title: r.title })),
      );
    }
    await this.em().removeAndFlush(group);
  }

  /**
   * The group's members now, within `scopes` (an alarm report's recorded scopes; null: the whole
   * account): devices by their scope, twins by their effective scope.
   */
  async members(group: SmartGroup, em: EntityManager, scopes: RecordedScopes): Promise<SmartGroupMember[]> {
    const conditions = parseDeviceFilter(group.filter);
    const alias = group.target === 'device' ? 'd' : 't';
    const within = { permissionScopeIds: scopes };
    const parts = [
      ...(group.target === 'device' ? deviceFilterSql(alias, conditions) : twinFilterSql(alias, conditions)),
      group.target === 'device'
        ? scopeFilter(within).sql('d.permission_scope_id')
        : visibleTwinSql(within, 't'),
    ];
    const where = [`${alias}.account_id = ?`, ...parts.map((p) => p.sql)].join(' AND ');
    const params = [group.account.id, ...parts.flatMap((p) => p.params)];
    const sql =
      group.target === 'device'
        ? `SELECT d.id, d.title, CASE WHEN d.last_seen IS NULL THEN 'Unknown' ELSE d.health_state END AS health_state
             FROM virtual_devices d WHERE ${where} ORDER BY d.title, d.id LIMIT ${MAX_MEMBERS}`
        : `SELECT t.id, t.title FROM digital_twins t WHERE ${where} ORDER BY t.title, t.id LIMIT ${MAX_MEMBERS}`;
    const rows = await em
      .getConnection()
      .execute<Array<{ id: string; title: string; health_state?: string }>>(sql, params);
    return rows.map((r) => ({
      id: r.id,
      title: r.title,
      ...(r.health_state ? { healthState: r.health_state } : {}),
    }));
  }

  private apply(group: SmartGroup, input: SmartGroupInput): void {
    if (input.title !== undefined) group.title = input.title.trim();
    if (!group.title) throw errors.validation('title is required', [problem('/title', 'required')]);
    if (input.target !== undefined) group.target = input.target;
    if (input.filter !== undefined) {
      for (const key of Object.keys(input.filter)) {
        if (!key.startsWith('filter['))
          throw errors.validation(`Unknown filter "${key}"`, [{ path: `/filter/${key}` }]);
      }
      parseDeviceFilter(input.filter);
      group.filter = input.filter;
    }
  }
}
