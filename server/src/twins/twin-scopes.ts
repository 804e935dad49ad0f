import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { Account } from '../accounts/account.entity.js';
import { PermissionScope } from '../permission-scopes/permission-scope.entity.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { scopeRestricted } from '../roles/privileges.js';
import type { DigitalTwin } from './digital-twin.entity.js';
import { parentNotAssigned } from './twin-hierarchy.js';

/**
 * Permission scopes of twins (docs/permission-scopes.md, spec 3.2.20 "use parent scope").
 *
 * The effective scope of a twin is its own scope when `useParentScope` is false or it is a root
 * twin, otherwise its parent's effective scope. Walking up `path` (root → self), that is the own
 * scope of the nearest twin at or above it that does not use its parent's scope, or of the root.
 * A root twin with no own scope has none: only unrestricted principals see it.
 *
 * The value is stored (`effective_permission_scope_id`) so lists, statistics and time-series
 * queries filter on one indexed column. It changes only when a twin's own scope, its flag or its
 * place changes: a new twin gets it from its parent's stored value; a changed or moved twin is
 * flushed and then `refreshSubtree` recomputes it and its descendants from the stored rows. Both
 * run in the transaction that holds the account's hierarchy lock (TwinHierarchy.lock), so
 * concurrent changes of one account's tree are applied one after another.
 */

/**
 * The effective scope of the twin row `alias`, computed from scratch along its path: the own
 * scope of the lowest twin on the path that is the root or does not use its parent's scope.
 */
export const effectiveScopeSql = (alias: string): string =>
  `(SELECT a.permission_scope_id FROM unnest(${alias}.path) WITH ORDINALITY AS x(id, ord)
     JOIN digital_twins a ON a.id = x.id
    WHERE x.ord = 1 OR NOT a.use_parent_scope
    ORDER BY x.ord DESC LIMIT 1)`;

/** The condition "the twin row `alias` is visible to the principal" for hand-written SQL. */
export const visibleTwinSql = (
  principal: Pick<Principal, 'permissionScopeIds'>,
  alias: string,
): { sql: string; params: unknown[] } => scopeFilter(principal).sql(`${alias}.effective_permission_scope_id`);

export class TwinScopes {
  constructor(private readonly em: () => EntityManager) {}

  /**
   * `permissionScopeId` of a twin: a scope of the twin's own account that the principal sees
   * itself (422 CONFIG_NOT_ASSIGNED otherwise, the same for a scope that does not exist).
   */
  async assignable(principal: Principal, account: Account, scopeId: string): Promise<PermissionScope> {
    const scope = await this.em().findOne(PermissionScope, { id: scopeId, account: account.id });
    if (!scope || !scopeFilter(principal).allows(scope.id)) {
      throw errors.unprocessable(
        'CONFIG_NOT_ASSIGNED',
        `Permission scope ${scopeId} is not available in the twin's account`,
        [{ ...problem('/permissionScopeId', 'notFound', { id: scopeId }), id: scopeId }],
      );
    }
    return scope;
  }

  /**
   * The own scope a restricted principal's new twin gets when it names none and does not inherit
   * one: the first of the principal's scopes in the twin's account (null: none there, and the
   * creation is refused by `settle`). Unrestricted principals get null (no scope).
   */
  async defaultScope(principal: Principal, account: Account): Promise<string | null> {
    const filter = scopeFilter(principal);
    if (!filter.restricted || filter.scopeIds.length === 0) return null;
    const rows = await this.em().find(
      PermissionScope,
      { id: { $in: [...filter.scopeIds] }, account: account.id },
      { fields: ['id'] },
    );
    const inAccount = new Set(rows.map((r) => r.id));
    return filter.scopeIds.find((id) => inAccount.has(id)) ?? null;
  }

  /**
   * The effective scope of a prospective parent. A parent the principal does not see is refused
   * exactly like a missing one (422 CONFIG_NOT_ASSIGNED), before any hierarchy check could tell
   * the two apart. Call under the hierarchy lock.
   */
  async parentScope(principal: Principal, accountId: string, parentId: string): Promise<string | null> {
    const rows = await this.em().execute<Array<{ scope: string | null }>>(
      'SELECT effective_permission_scope_id AS scope FROM digital_twins WHERE id = ? AND account_id = ?',
      [parentId, accountId],
    );
    const row = rows[0];
    if (!row || !scopeFilter(principal).allows(row.scope)) throw parentNotAssigned(parentId);
    return row.scope;
  }

  /** The stored effective scope of a twin of the account (null: none, or no such twin). */
  async storedScope(accountId: string, twinId: string): Promise<string | null> {
    const rows = await this.em().execute<Array<{ scope: string | null }>>(
      'SELECT effective_permission_scope_id AS scope FROM digital_twins WHERE id = ? AND account_id = ?',
      [twinId, accountId],
    );
    return rows[0]?.scope ?? null;
  }

  /** The effective scope of a twin by the rule, given its parent's (ignored for a root twin). */
  effectiveOf(twin: DigitalTwin, parentEffective: string | null): string | null {
    return twin.useParentScope && twin.parent !== null ? parentEffective : (twin.permissionScope?.id ?? null);
  }

  /**
   * Takes `effective` as the twin's effective scope. A principal restricted to scopes may not
   * leave the twin outside them (403 PERMISSION_SCOPE_RESTRICTED): it could no longer see what
   * it just saved, and others would see it instead.
   */
  adopt(principal: Principal, twin: DigitalTwin, effective: string | null): void {
    if (!scopeFilter(principal).allows(effective)) {
      throw scopeRestricted(
        effective === null
          ? 'The twin would have no permission scope, and you only see twins of your permission scopes'
          : 'The twin would leave the permission scopes you are restricted to',
      );
    }
    if ((twin.effectivePermissionScope?.id ?? null) !== effective) {
      twin.effectivePermissionScope = effective ? this.em().getReference(PermissionScope, effective) : null;
    }
  }

  /**
   * Recomputes the stored effective scope of a twin and its descendants from the stored rows
   * (own scopes, flags, paths), after the caller has flushed its change; returns the twin's own.
   * One statement: the value depends only on columns this statement does not change.
   */
  async refreshSubtree(accountId: string, twinId: string): Promise<string | null> {
    // Rows whose value stays are not rewritten.
    await this.em().execute(
      `UPDATE digital_twins t SET effective_permission_scope_id = c.scope
         FROM (SELECT d.id, ${effectiveScopeSql('d')} AS scope FROM digital_twins d
                WHERE d.account_id = ? AND ?::uuid = ANY(d.path)) c
        WHERE t.id = c.id AND t.effective_permission_scope_id IS DISTINCT FROM c.scope`,
      [accountId, twinId],
      'run',
    );
    return this.storedScope(accountId, twinId);
  }

  /**
   * Before a twin is deleted: its children that use its scope become root twins, so the scope
   * they had becomes their own. Nobody's view of them (or of their subtrees) changes.
   */
  async keepInheritedScopes(accountId: string, twinId: string): Promise<void> {
    await this.em().execute(
      `UPDATE digital_twins SET permission_scope_id = effective_permission_scope_id
        WHERE account_id = ? AND parent_id = ? AND use_parent_scope`,
      [accountId, twinId],
      'run',
    );
  }
}
