import type { EntityManager } from '@mikro-orm/postgresql';
import type { RecordedScopes } from '../permission-scopes/recorded-scopes.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { isUuid } from '../platform/crypto/ids.js';
import { likePattern } from '../platform/http/list.js';

/** One condition on a device (export plans); `not` negates it, a missing property never matches. */
export interface DeviceCondition {
  field: 'tag' | 'title' | 'property' | 'hierarchy' | 'permissionScope' | 'type' | 'device';
  key?: string;
  value: string;
  not?: boolean;
}

export interface SelectedDevice {
  id: string;
  /** The spec's `device_id`: the name the device uses on its connector. */
  deviceId: string;
  title: string;
  /** From the device's current `_meta.location` state (network-server location), when it has one. */
  latitude: number | null;
  longitude: number | null;
  /** keyValueData as text (numbers and booleans as written, objects as JSON). */
  customProperties: Record<string, string>;
}

/** Devices one selection may hold: an export over more is refused rather than held in memory. */
export const MAX_SELECTED_DEVICES = 50_000;

/** Parent chains are short (gateway, sub-meter); the bound only stops a cycle written around the API. */
const MAX_DEPTH = 32;

/** The device and its parents, nearest first: `(id, title, depth)`. */
const ANCESTORS_SQL = `WITH RECURSIVE up(id, parent_id, title, depth) AS (
     SELECT d.id, d.parent_id, d.title, 0
     UNION ALL
     SELECT p.id, p.parent_id, p.title, up.depth + 1 FROM virtual_devices p JOIN up ON p.id = up.parent_id
      WHERE up.depth < ${MAX_DEPTH})`;

const HIERARCHY_SQL = `(${ANCESTORS_SQL} SELECT string_agg(title, ' / ' ORDER BY depth DESC) FROM up)`;

function conditionSql(c: DeviceCondition): { sql: string; params: unknown[] } {
  switch (c.field) {
    case 'tag':
      return { sql: '? = ANY(d.tags)', params: [c.value] };
    case 'title':
      return { sql: 'd.title ILIKE ?', params: [likePattern(c.value)] };
    case 'hierarchy':
      return { sql: `${HIERARCHY_SQL} ILIKE ?`, params: [likePattern(c.value)] };
    // Compared as text, as the device list's filter[kv.<key>] does: 12 matches the number 12.
    case 'property':
      return { sql: '(d.key_value_data ->> ?) = ?', params: [c.key ?? '', c.value] };
    // A value that is no UUID matches nothing (and never reaches PostgreSQL as a uuid).
    case 'permissionScope':
      return isUuid(c.value)
        ? { sql: 'd.permission_scope_id = ?', params: [c.value] }
        : { sql: 'false', params: [] };
    case 'type':
      return isUuid(c.value) ? { sql: 'd.driver_id = ?', params: [c.value] } : { sql: 'false', params: [] };
    case 'device':
      return isUuid(c.value)
        ? { sql: `?::uuid IN (${ANCESTORS_SQL} SELECT id FROM up)`, params: [c.value] }
        : { sql: 'false', params: [] };
  }
}

const text = (value: unknown): string =>
  typeof value === 'string' ? value : value === null ? '' : JSON.stringify(value);

const coordinate = (location: unknown, field: 'latitude' | 'longitude'): number | null => {
  const value = (location as Record<string, unknown> | null)?.[field];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
};

/**
 * Reads of the devices domain for export plans: the devices of `accountId` within `scopes`
 * (recorded by the plan) that meet the conditions, all of them (`and`) or any (`or`), ordered by
 * title and id. Callers have checked that the plan may read the account.
 */
export async function selectDevices(
  em: EntityManager,
  input: { accountId: string; scopes: RecordedScopes; operator: 'and' | 'or'; conditions: DeviceCondition[] },
): Promise<SelectedDevice[]> {
  const parts = input.conditions.map((c) => {
    const part = conditionSql(c);
    return c.not ? { sql: `NOT COALESCE((${part.sql}), false)`, params: part.params } : part;
  });
  const chosen =
    parts.length === 0
      ? 'true'
      : parts.map((p) => `(${p.sql})`).join(input.operator === 'or' ? ' OR ' : ' AND ');
  const visible = scopeFilter({ permissionScopeIds: input.scopes }).sql('d.permission_scope_id');
  const rows = await em.getConnection().execute<
    Array<{
      id: string;
      device_id: string;
      title: string;
      key_value_data: Record<string, unknown> | null;
      location: unknown;
    }>
  >(
    `SELECT d.id, d.device_id, d.title, d.key_value_data,
            (SELECT s.value FROM device_states s WHERE s.device_id = d.id AND s.key = '_meta.location') AS location
       FROM virtual_devices d
      WHERE d.account_id = ? AND ${visible.sql} AND (${chosen})
      ORDER BY lower(d.title), d.id LIMIT ${MAX_SELECTED_DEVICES + 1}`,
    [input.accountId, ...visible.params, ...parts.flatMap((p) => p.params)],
  );
  return rows.map((r) => ({
    id: r.id,
    deviceId: r.device_id,
    title: r.title,
    latitude: coordinate(r.location, 'latitude'),
    longitude: coordinate(r.location, 'longitude'),
    customProperties: Object.fromEntries(
      Object.entries(r.key_value_data ?? {}).map(([k, v]) => [k, text(v)]),
    ),
  }));
}
