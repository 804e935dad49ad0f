import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { checkLayout } from './dashboard-layout.js';
import { layoutsFor, withHiddenReferences } from './dashboard-scopes.js';
import { Dashboard } from './dashboard.entity.js';

export const DASHBOARD_SORTABLE = ['title', 'createdAt', 'updatedAt'] as const;

/** A dashboard as one reader sees it: its layout without twins and states hidden from the reader. */
export interface DashboardView {
  dashboard: Dashboard;
  layout: Record<string, unknown>;
}

export interface DashboardInput {
  title?: string;
  description?: string;
  layout?: Record<string, unknown>;
}

/**
 * Dashboards of an account (the widget grid itself is the console's business). Callers have
 * checked dashboard.read/manage; here the account must be reachable. Readers restricted to
 * permission scopes get layouts without the twins and states they do not see (dashboard-scopes.ts).
 */
export class DashboardService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
  ) {}

  async list(
    principal: Principal,
    params: ListParams,
    accountId?: string,
  ): Promise<ListResult<DashboardView>> {
    const account = await this.accounts.actingAccount(principal, accountId);
    const where = params.search ? { account, title: { $ilike: likePattern(params.search) } } : { account };
    const [rows, total] = await this.em().findAndCount(Dashboard, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(await this.views(principal, rows), total, params);
  }

  async show(principal: Principal, id: string): Promise<DashboardView> {
    return (await this.views(principal, [await this.get(principal, id)]))[0]!;
  }

  private async views(principal: Principal, dashboards: Dashboard[]): Promise<DashboardView[]> {
    const layouts = await layoutsFor(
      this.em(),
      principal,
      dashboards.map((d) => d.layout),
    );
    return dashboards.map((dashboard, i) => ({ dashboard, layout: layouts[i]! }));
  }

  /** A dashboard the principal reaches (its account or below), else 404. */
  async get(principal: Principal, id: string): Promise<Dashboard> {
    const dashboard = await this.em().findOne(Dashboard, { id }, { populate: ['account'] });
    if (!dashboard || !canReach(principal, dashboard.account)) throw errors.notFound('Dashboard', id);
    return dashboard;
  }

  async create(principal: Principal, input: DashboardInput & { accountId?: string }): Promise<DashboardView> {
    const account = await this.accounts.actingAccount(principal, input.accountId);
    const dashboard = new Dashboard();
    dashboard.account = account;
    await this.checkLayoutOf(account, input);
    this.apply(dashboard, input);
    await this.em().persistAndFlush(dashboard);
    return (await this.views(principal, [dashboard]))[0]!;
  }

  async update(principal: Principal, id: string, input: DashboardInput): Promise<DashboardView> {
    const dashboard = await this.get(principal, id);
    if (input.layout !== undefined)
      input = {
        ...input,
        layout: await withHiddenReferences(this.em(), principal, dashboard.layout, input.layout),
      };
    // Checked before anything is assigned: a refused write must not leave a changed entity behind.
    await this.checkLayoutOf(dashboard.account, input);
    this.apply(dashboard, input);
    await this.em().flush();
    return (await this.views(principal, [dashboard]))[0]!;
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
    const title = input.title !== undefined ? input.title.trim() : dashboard.title;
    if (!title) throw errors.validation('title is required', [problem('/title', 'required')]);
    dashboard.title = title;
    if (input.description !== undefined) dashboard.description = input.description;
    if (input.layout !== undefined) dashboard.layout = input.layout;
  }

  /**
   * The console's grid (version 1) must be well-formed, and nested dashboard widgets may only open
   * dashboards of the same account (like a twin's dashboard).
   */
  private async checkLayoutOf(account: Account, input: DashboardInput): Promise<void> {
    if (input.layout === undefined) return;
    const nested = checkLayout(input.layout);
    if (nested.length === 0) return;
    const ids = [...new Set(nested.map((entry) => entry.dashboardId))];
    const found = await this.em().find(Dashboard, { id: { $in: ids }, account }, { fields: ['id'] });
    const known = new Set(found.map((row) => row.id));
    const stranger = nested.find((entry) => !known.has(entry.dashboardId));
    if (stranger) {
      throw errors.unprocessable(
        'CONFIG_NOT_ASSIGNED',
        `layout.widgets.${stranger.widget}.dashboardId: dashboard ${stranger.dashboardId} is not a dashboard of this dashboard's account`,
        [
          {
            ...problem(`/layout/widgets/${stranger.widget}/dashboardId`, 'notFound', {
              id: stranger.dashboardId,
            }),
            id: stranger.dashboardId,
          },
        ],
      );
    }
  }
}
