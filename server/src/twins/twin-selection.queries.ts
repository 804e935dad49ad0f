import type { EntityManager } from '@mikro-orm/postgresql';
import type { RecordedScopes } from '../permission-scopes/recorded-scopes.js';
import { isUuid } from '../platform/crypto/ids.js';
import { likePattern } from '../platform/http/list.js';
import type { TwinAddress } from './digital-twin.entity.js';
import { visibleTwinSql } from './twin-scopes.js';

/** One condition on a twin (export plans); `not` negates it, a missing property never matches. */
export interface TwinCondition {
  field: 'tag' | 'title' | 'property' | 'hierarchy' | 'permissionScope' | 'twin';
  key?: string;
  value: string;
  not?: boolean;
}

export interface SelectedTwin {
  id: string;
  title: string;
  /** Titles from the root to the twin, joined by ` / ` (as the query language's twin.hierarchy). */
  hierarchy: string;
  referenceId: string | null;
  address: TwinAddress | null;
  latitude: number | null;
  longitude: number | null;
  customProperties: Record<string, string>;
}

/** Twins one selection may hold: an export over more is refused rather than held in memory. */
export const MAX_SELECTED_TWINS = 50_000;

const HIERARCHY_SQL = `(SELECT string_agg(a.title, ' / ' ORDER BY x.ord) FROM unnest(t.path) WITH ORDINALITY AS x(id, ord)
   JOIN digital_twins a ON a.id = x.id)`;

function conditionSql(c: TwinCondition): { sql: string; params: unknown[] } {
  switch (c.field) {
    case 'tag':
      return { sql: '? = ANY(t.tags)', params: [c.value] };
    case 'title':
      return { sql: 't.title ILIKE ?', params: [likePattern(c.value)] };
    case 'hierarchy':
      return { sql: `${HIERARCHY_SQL} ILIKE ?`, params: [likePattern(c.value)] };
    case 'property':
      return { sql: '(t.custom_properties ->> ?) = ?', params: [c.key ?? '', c.value] };
    // A value that is no UUID matches nothing (and never reaches PostgreSQL as a uuid).
    case 'permissionScope':
      return isUuid(c.value)
        ? { sql: 't.effective_permission_scope_id = ?', params: [c.value] }
        : { sql: 'false', params: [] };
    case 'twin':
      return isUuid(c.value)
        ? { sql: '?::uuid = ANY(t.path)', params: [c.value] }
        : { sql: 'false', params: [] };
  }
}

/**
 * Reads of the twins domain for export plans: the twins of `accountId` within `scopes` (recorded
 * by the plan) that meet the conditions, all of them (`and`) or any (`or`), ordered by hierarchy
 * and title. Callers have checked that the plan may read the account.
 */
export async function selectTwins(
  em: EntityManager,
  input: { accountId: string; scopes: RecordedScopes; operator: 'and' | 'or'; conditions: TwinCondition[] },
): Promise<SelectedTwin[]> {
  const parts = input.conditions.map((c) => {
    const part = conditionSql(c);
    return c.not ? { sql: `NOT COALESCE((${part.sql}), false)`, params: part.params } : part;
  });
  const chosen =
    parts.length === 0
      ? 'true'
      : parts.map((p) => `(${p.sql})`).join(input.operator === 'or' ? ' OR ' : ' AND ');
  const visible = visibleTwinSql({ permissionScopeIds: input.scopes }, 't');
  const rows = await em.getConnection().execute<
    Array<{
      id: string;
      title: string;
      hierarchy: string | null;
      reference_id: string | null;
      address: TwinAddress | null;
      latitude: number | null;
      longitude: number | null;
      custom_properties: Record<string, string> | null;
    }>
  >(
    `SELECT t.id, t.title, ${HIERARCHY_SQL} AS hierarchy, t.reference_id, t.address, t.latitude, t.longitude,
            t.custom_properties
       FROM digital_twins t
      WHERE t.account_id = ? AND ${visible.sql} AND (${chosen})
      ORDER BY hierarchy, t.id LIMIT ${MAX_SELECTED_TWINS + 1}`,
    [input.accountId, ...visible.params, ...parts.flatMap((p) => p.params)],
  );
  return rows.map((r) => ({
    id: r.id,
    title: r.title,
    hierarchy: r.hierarchy ?? r.title,
    referenceId: r.reference_id,
    address: r.address,
    latitude: r.latitude === null ? null : Number(r.latitude),
    longitude: r.longitude === null ? null : Number(r.longitude),
    customProperties: r.custom_properties ?? {},
  }));
}
