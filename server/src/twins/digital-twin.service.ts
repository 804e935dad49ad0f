import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import type { DashboardService } from '../dashboards/dashboard.service.js';
import type { DeviceCondition } from '../devices/virtual-device.filter.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { learnCommonWords } from '../platform/http/common-words.js';
import { keysetPage, type Execute, type SortColumn } from '../platform/http/list-sql.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { DigitalTwin, type TwinAddress, type TwinStatus } from './digital-twin.entity.js';
import { statusFilterSql, twinFilterSql, twinTitle } from './digital-twin.filter.js';
import { locate, type Geocoder } from './geocoder.js';
import { TwinHierarchy } from './twin-hierarchy.js';
import { TwinScopes, visibleTwinSql } from './twin-scopes.js';

export const DIGITAL_TWIN_SORTABLE = ['title', 'createdAt', 'updatedAt'] as const;
const SORT_COLUMNS: Record<string, SortColumn> = {
  // Text sorts ignore case, as the search does. `keyset`: NOT NULL and indexed (account_id, column, id).
  title: { sql: 'lower(t.title)', keyset: true },
  createdAt: { sql: 't.created_at', keyset: true },
  // Indexed too; no cursor: edits move it, and the anchors of deep pages do not follow edits.
  updatedAt: { sql: 't.updated_at' },
};

export interface DigitalTwinInput {
  title?: string;
  description?: string;
  parentId?: string | null;
  address?: TwinAddress | null;
  latitude?: number | null;
  longitude?: number | null;
  referenceId?: string | null;
  customProperties?: Record<string, string>;
  tags?: string[];
  useParentScope?: boolean;
  permissionScopeId?: string | null;
  status?: TwinStatus;
  dashboardId?: string | null;
}

export interface TwinListFilter {
  accountId?: string;
  parentId?: string;
  referenceId?: string;
  /** Any of these statuses; empty: every status. */
  statuses?: TwinStatus[];
  conditions: DeviceCondition[];
}

/** A data state as a twin reply lists it (the states API owns the full record). */
export interface TwinStateSummary {
  id: string;
  key: string;
  title: string;
  valueType: string;
  unit: string | null;
  value: unknown;
  timestamp: Date | null;
  warning: string | null;
}

/** A twin with what its replies show beyond the record: the way down from the root, and its states. */
export interface TwinView {
  twin: DigitalTwin;
  hierarchy: Array<{ id: string; title: string }>;
  states: TwinStateSummary[];
}

/** Something that may refuse a twin deletion (the states domain: states feeding other twins). */
export type TwinDeletionGuard = (twin: DigitalTwin) => Promise<unknown[]>;

/**
 * Digital twins. Callers have checked digitalTwin.read/manage; here the twin's account must be
 * reachable and the twin visible through the caller's permission scopes (otherwise 404; the
 * effective scope rule is in twin-scopes.ts). A twin PUT never touches the twin's data states:
 * they are only read here, for replies.
 */
export class DigitalTwinService {
  /** Extension point, as on virtual devices: guards return blockers (409 DELETE_BLOCKED). */
  readonly deletionGuards: TwinDeletionGuard[] = [];
  /**
   * Told after a change that moves data between twins (a new `referenceId` re-routes devices, a
   * deletion drops states): the state engine reloads its routing index.
   */
  readonly routingListeners: Array<(twinId: string) => void> = [];
  /** Told after a twin moved or changed its scope: who may see it and its subtree may have changed. */
  readonly visibilityListeners: Array<() => void> = [];
  private readonly hierarchy: TwinHierarchy;
  private readonly scopes: TwinScopes;

  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly dashboards: DashboardService,
    private readonly geocoder: Geocoder | null,
  ) {
    this.hierarchy = new TwinHierarchy(em);
    this.scopes = new TwinScopes(em);
  }

  async list(
    principal: Principal,
    params: ListParams,
    filter: TwinListFilter,
    after?: string,
  ): Promise<ListResult<TwinView>> {
    const accountId = await this.accounts.actingAccountId(principal, filter.accountId);
    const parts: Array<{ sql: string; params: unknown[] }> = [
      { sql: 't.account_id = ?', params: [accountId] },
      visibleTwinSql(principal, 't'),
    ];
    const unfiltered = parts.length;
    if (filter.parentId) parts.push({ sql: 't.parent_id = ?', params: [filter.parentId] });
    if (filter.referenceId !== undefined)
      parts.push({ sql: 't.reference_id = ?', params: [filter.referenceId] });
    const status = statusFilterSql('t', filter.statuses ?? []);
    if (status) parts.push(status);
    const conditions = [...filter.conditions];
    if (params.search) conditions.push({ field: 'title', not: false, value: params.search });
    const execute: Execute = async <T>(sql: string, values: unknown[]) =>
      (await this.em().execute(sql, values)) as unknown as T;
    const titles = conditions.filter((c) => c.field === 'title' && !c.not).map((c) => c.value);
    await learnCommonWords(execute, twinTitle('t'), titles);
    parts.push(...twinFilterSql('t', conditions));
    const where = parts.map((p) => `(${p.sql})`).join(' AND ');
    const whereParams = parts.flatMap((p) => p.params);
    const page = await keysetPage<{ id: string }>(execute, params, {
      table: 'digital_twins',
      alias: 't',
      columns: SORT_COLUMNS,
      where: { sql: where, params: whereParams },
      after,
      wholeAccount: parts.length === unfiltered && !scopeFilter(principal).restricted ? accountId : undefined,
    });
    const idRows = page.rows;
    const ids = idRows.map((r) => r.id);
    const rows = ids.length ? await this.em().find(DigitalTwin, { id: { $in: ids } }) : [];
    const byId = new Map(rows.map((r) => [r.id, r]));
    const views = await this.views(
      principal,
      ids.map((id) => byId.get(id)!),
    );
    return listResult(views, page.total, params, page.more);
  }

  async get(principal: Principal, id: string): Promise<DigitalTwin> {
    const notFound = () => errors.notFound('Digital twin', id);
    const twin = await this.em().findOne(DigitalTwin, { id }, { populate: ['account'] });
    if (!twin || !canReach(principal, twin.account)) throw notFound();
    scopeFilter(principal).assertVisible(twin.effectivePermissionScope?.id, notFound);
    return twin;
  }

  async show(principal: Principal, id: string): Promise<TwinView> {
    return this.view(principal, await this.get(principal, id));
  }

  /** `geocode`: resolve the address to coordinates with the configured geocoder first. */
  async create(
    principal: Principal,
    input: DigitalTwinInput & { accountId?: string },
    geocode = false,
  ): Promise<TwinView> {
    const account = await this.accounts.actingAccount(principal, input.accountId);
    const twin = new DigitalTwin();
    twin.account = account;
    twin.useParentScope = input.useParentScope ?? true;
    const parentId = input.parentId ?? null;
    if (input.permissionScopeId === undefined && !(twin.useParentScope && parentId)) {
      // A restricted caller could never see a twin without a scope: give it one of the caller's.
      const scopeId = await this.scopes.defaultScope(principal, account);
      if (scopeId) input = { ...input, permissionScopeId: scopeId };
    }
    await this.apply(principal, twin, input, geocode);
    await this.em().transactional(async () => {
      await this.hierarchy.lock(account.id);
      const parentScope = parentId ? await this.scopes.parentScope(principal, account.id, parentId) : null;
      twin.path = await this.hierarchy.pathBelow(account.id, twin.id, parentId);
      twin.parent = parentId ? this.em().getReference(DigitalTwin, parentId) : null;
      this.scopes.adopt(principal, twin, this.scopes.effectiveOf(twin, parentScope));
      this.em().persist(twin);
    });
    return this.view(principal, twin);
  }

  /** Partial: omitted fields keep their value; a new parent moves the twin with its subtree. */
  async update(
    principal: Principal,
    id: string,
    input: DigitalTwinInput,
    geocode = false,
  ): Promise<TwinView> {
    const twin = await this.get(principal, id);
    const referenceId = twin.referenceId;
    const scopeBefore = { flag: twin.useParentScope, own: twin.permissionScope?.id ?? null };
    await this.apply(principal, twin, input, geocode);
    const newParentId = input.parentId;
    const moving = newParentId !== undefined && newParentId !== (twin.parent?.id ?? null);
    const rescoped =
      twin.useParentScope !== scopeBefore.flag || (twin.permissionScope?.id ?? null) !== scopeBefore.own;
    if (moving || rescoped) {
      await this.em().transactional(async () => {
        const accountId = twin.account.id;
        await this.hierarchy.lock(accountId);
        if (moving) {
          if (newParentId) await this.scopes.parentScope(principal, accountId, newParentId);
          // Re-read under the lock: a concurrent move may have changed this twin's place meanwhile.
          const oldPath = (await this.hierarchy.storedPath(accountId, twin.id)) ?? twin.path;
          const newPath = await this.hierarchy.pathBelow(accountId, twin.id, newParentId);
          await this.hierarchy.moveSubtree(accountId, oldPath, newPath);
          twin.path = newPath;
          twin.parent = newParentId ? this.em().getReference(DigitalTwin, newParentId) : null;
        }
        // From the stored rows, so a concurrent change of another field of this twin counts too.
        await this.em().flush();
        this.scopes.adopt(principal, twin, await this.scopes.refreshSubtree(accountId, twin.id));
      });
      for (const listener of this.visibilityListeners) listener();
    } else {
      await this.em().flush();
    }
    if (twin.referenceId !== referenceId) this.routingChanged(twin.id);
    return this.view(principal, twin);
  }

  private routingChanged(twinId: string): void {
    for (const listener of this.routingListeners) listener(twinId);
  }

  /** Removes the address and the coordinates that came with it (the twin leaves the map). */
  async deleteAddress(principal: Principal, id: string): Promise<TwinView> {
    const twin = await this.get(principal, id);
    twin.address = null;
    twin.latitude = null;
    twin.longitude = null;
    await this.em().flush();
    return this.view(principal, twin);
  }

  /** Its data states go with it (foreign key cascade); its children become root twins. */
  async delete(principal: Principal, id: string): Promise<void> {
    const twin = await this.get(principal, id);
    const blockers = (await Promise.all(this.deletionGuards.map((guard) => guard(twin)))).flat();
    if (blockers.length > 0) throw errors.deleteBlocked('The twin is still in use', blockers);
    await this.em().transactional(async () => {
      await this.hierarchy.lock(twin.account.id);
      const path = (await this.hierarchy.storedPath(twin.account.id, twin.id)) ?? twin.path;
      await this.scopes.keepInheritedScopes(twin.account.id, twin.id);
      await this.hierarchy.detachChildren(twin.account.id, path);
      this.em().remove(twin);
    });
    this.routingChanged(id);
  }

  async view(principal: Principal, twin: DigitalTwin): Promise<TwinView> {
    return (await this.views(principal, [twin]))[0]!;
  }

  /** Hierarchy (as far as the principal sees it) and states of several twins in two queries. */
  async views(principal: Principal, twins: DigitalTwin[]): Promise<TwinView[]> {
    if (twins.length === 0) return [];
    const lineages = await this.hierarchy.lineages(
      twins.map((t) => t.path),
      scopeFilter(principal),
    );
    const rows = await this.em().execute<Array<Record<string, unknown>>>(
      `SELECT id, twin_id, key, title, value_type, unit, value, timestamp, warning
         FROM data_states WHERE twin_id IN (?) ORDER BY key, id`,
      [twins.map((t) => t.id)],
    );
    const states = new Map<string, TwinStateSummary[]>();
    for (const r of rows) {
      const list = states.get(r.twin_id as string) ?? [];
      list.push({
        id: r.id as string,
        key: r.key as string,
        title: r.title as string,
        valueType: r.value_type as string,
        unit: (r.unit as string | null) ?? null,
        value: r.value ?? null,
        timestamp: r.timestamp ? new Date(r.timestamp as string) : null,
        warning: (r.warning as string | null) ?? null,
      });
      states.set(r.twin_id as string, list);
    }
    return twins.map((twin, i) => ({ twin, hierarchy: lineages[i]!, states: states.get(twin.id) ?? [] }));
  }

  private async apply(
    principal: Principal,
    twin: DigitalTwin,
    input: DigitalTwinInput,
    geocode: boolean,
  ): Promise<void> {
    if (input.title !== undefined) twin.title = input.title.trim();
    if (!twin.title) throw errors.validation('title is required', [problem('/title', 'required')]);
    if (input.description !== undefined) twin.description = input.description;
    if (input.address !== undefined) twin.address = input.address;
    if (input.latitude !== undefined) twin.latitude = input.latitude;
    if (input.longitude !== undefined) twin.longitude = input.longitude;
    if (input.referenceId !== undefined) twin.referenceId = input.referenceId?.trim() || null;
    if (input.customProperties !== undefined) twin.customProperties = input.customProperties;
    if (input.tags !== undefined) twin.tags = [...new Set(input.tags)];
    if (input.useParentScope !== undefined) twin.useParentScope = input.useParentScope;
    // The scope it has already is kept as is: a read-back twin may carry a scope the caller does not see.
    if (
      input.permissionScopeId !== undefined &&
      input.permissionScopeId !== (twin.permissionScope?.id ?? null)
    ) {
      twin.permissionScope =
        input.permissionScopeId === null
          ? null
          : await this.scopes.assignable(principal, twin.account, input.permissionScopeId);
    }
    if (input.status !== undefined) twin.status = input.status;
    if (input.dashboardId !== undefined) {
      if (input.dashboardId === null) twin.dashboard = null;
      else {
        const dashboard = await this.dashboards.ofAccount(twin.account, input.dashboardId);
        if (!dashboard) {
          throw errors.unprocessable(
            'CONFIG_NOT_ASSIGNED',
            `dashboardId: dashboard ${input.dashboardId} is not a dashboard of the twin's account`,
            [{ ...problem('/dashboardId', 'notFound', { id: input.dashboardId }), id: input.dashboardId }],
          );
        }
        twin.dashboard = dashboard;
      }
    }
    if ((twin.latitude === null) !== (twin.longitude === null)) {
      const [property, missingProperty] =
        twin.latitude === null ? ['longitude', 'latitude'] : ['latitude', 'longitude'];
      throw errors.validation('latitude and longitude are set together (or both null)', [
        problem(`/${missingProperty}`, 'dependentRequired', { property, missingProperty }),
      ]);
    }
    if (geocode) {
      const point = await locate(this.geocoder, twin.address);
      twin.latitude = point.latitude;
      twin.longitude = point.longitude;
    }
  }
}
