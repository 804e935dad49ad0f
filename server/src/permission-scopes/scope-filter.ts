import type { FilterQuery } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { AppError } from '../platform/errors.js';

/**
 * How permission scopes restrict what a principal sees (docs/permission-scopes.md):
 * - `permissionScopeIds: null` (users without scopes, every API key): no restriction.
 * - otherwise only objects whose scope is one of those ids; objects without a scope are hidden.
 * Lists add `where(…)` to their query; single reads call `assertVisible`, which answers with the
 * caller's not-found error so a hidden object looks exactly like a missing one.
 */
export interface ScopeFilter {
  readonly restricted: boolean;
  /** The scopes the principal is restricted to; empty when unrestricted. */
  readonly scopeIds: readonly string[];
  /** MikroORM condition on the property holding the object's scope (`{}` when unrestricted). */
  where<T extends object>(property: string): FilterQuery<T>;
  /** Raw-SQL form for hand-written queries: `column IN (?)`, or `TRUE` when unrestricted. */
  sql(column: string): { sql: string; params: unknown[] };
  /** Whether an object carrying `scopeId` (null: none) is visible. */
  allows(scopeId: string | null | undefined): boolean;
  /** Throws `notFound()` unless `allows(scopeId)`. */
  assertVisible(scopeId: string | null | undefined, notFound: () => AppError): void;
}

export function scopeFilter(principal: Pick<Principal, 'permissionScopeIds'>): ScopeFilter {
  const ids = principal.permissionScopeIds;
  if (ids === null) {
    return {
      restricted: false,
      scopeIds: [],
      where: () => ({}),
      sql: () => ({ sql: 'TRUE', params: [] }),
      allows: () => true,
      assertVisible: () => {},
    };
  }
  const scopeIds = [...ids];
  const allows = (scopeId: string | null | undefined) => !!scopeId && scopeIds.includes(scopeId);
  return {
    restricted: true,
    scopeIds,
    where: <T extends object>(property: string) => ({ [property]: { $in: scopeIds } }) as FilterQuery<T>,
    // knex expands an array binding into a value list, so `IN (?)` (never `= ANY(?)`); none: nothing visible.
    sql: (column) =>
      scopeIds.length ? { sql: `${column} IN (?)`, params: [scopeIds] } : { sql: 'FALSE', params: [] },
    allows,
    assertVisible: (scopeId, notFound) => {
      if (!allows(scopeId)) throw notFound();
    },
  };
}
