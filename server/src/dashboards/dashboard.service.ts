import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { errors } from '../platform/errors.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { Dashboard } from './dashboard.entity.js';

export const DASHBOARD_SORTABLE = ['title', 'createdAt', 'updatedAt'] as const;

export interface DashboardInput {
  title?: string;
  description?: string;
  layout?: Record<string, unknown>;
}

/**
 * Dashboards of an account (the widget grid itself is the console's business). Callers have
 * checked dashboard.read/manage; here the account must be reachable.
 */
export class DashboardService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
  ) {}

  async list(principal: Principal, params: ListParams, accountId?: string): Promise<ListResult<Dashboard>> {
    const account = await this.accounts.actingAccount(principal, accountId);
    const where = params.search ? { account, title: { $ilike: likePattern(params.search) } } : { account };
    const [rows, total] = await this.em().findAndCount(Dashboard, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }

  async get(principal: Principal, id: string): Promise<Dashboard> {
    const dashboard = await this.em().findOne(Dashboard, { id }, { populate: ['account'] });
    if (!dashboard || !canReach(principal, dashboard.account)) throw errors.notFound('Dashboard', id);
    return dashboard;
  }

  async create(principal: Principal, input: DashboardInput & { accountId?: string }): Promise<Dashboard> {
    const account = await this.accounts.actingAccount(principal, input.accountId);
    const dashboard = new Dashboard();
    dashboard.account = account;
    this.apply(dashboard, input);
    await this.em().persistAndFlush(dashboard);
    return dashboard;
  }

  async update(principal: Principal, id: string, input: DashboardInput): Promise<Dashboard> {
    const dashboard = await this.get(principal, id);
    this.apply(dashboard, input);
    await this.em().flush();
    return dashboard;
  }

  /** Twins showing it lose the reference (the foreign key sets it to null). */
  async delete(principal: Principal, id: string): Promise<void> {
    await this.em().removeAndFlush(await this.get(principal, id));
  }

  /** A dashboard of exactly this account: twins may only show dashboards of their own account. */
  ofAccount(account: Account, id: string): Promise<Dashboard | null> {
    return this.em().findOne(Dashboard, { id, account });
  }

  private apply(dashboard: Dashboard, input: DashboardInput): void {
    if (input.title !== undefined) dashboard.title = input.title.trim();
    if (!dashboard.title) throw errors.validation('title is required', [{ path: '/title' }]);
    if (input.description !== undefined) dashboard.description = input.description;
    if (input.layout !== undefined) dashboard.layout = input.layout;
  }
}
