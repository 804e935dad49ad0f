import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { visibleAlarmSql } from '../alarms/alarm-visibility.js';
import type { AlarmEntry } from '../integration/ports.js';
import { expandPermissions } from '../roles/permissions.js';
import { visibleTwinSql } from '../twins/twin-scopes.js';

/**
 * Which of `deviceIds` the principal may see: devices of its home account or a sub-account
 * (the rule of AccountService.canReach, as SQL) and, for scoped users, of their permission scopes.
 */
export async function visibleDevices(
  em: () => EntityManager,
  principal: Principal,
  deviceIds: string[],
): Promise<Set<string>> {
  if (deviceIds.length === 0) return new Set();
  const scope = scopeFilter(principal);
  // MikroORM inlines a JS array as a value list, so arrays go in as PostgreSQL array literals (ids are validated UUIDs).
  const rows = await em()
    .getConnection()
    .execute<Array<{ id: string }>>(
      `SELECT v.id FROM virtual_devices v JOIN accounts a ON a.id = v.account_id
        WHERE v.id = ANY(?::uuid[]) AND ?::uuid = ANY(a.path)
          ${scope.restricted ? 'AND v.permission_scope_id = ANY(?::uuid[])' : ''}`,
      [uuidArray(deviceIds), principal.accountId, ...(scope.restricted ? [uuidArray(scope.scopeIds)] : [])],
    );
  return new Set(rows.map((r) => r.id));
}

/**
 * Which of `twinIds` the principal may see, by the twin routes' rule in one statement: the twin's
 * account is the principal's home account or a sub-account (AccountService.canReach as SQL), and
 * the twin is visible through the principal's permission scopes. The scope condition is the twins
 * domain's own (`visibleTwinSql`, the effective scope inherited along the hierarchy), not a copy.
 */
export async function visibleTwins(
  em: () => EntityManager,
  principal: Principal,
  twinIds: string[],
): Promise<Set<string>> {
  if (twinIds.length === 0) return new Set();
  const scope = visibleTwinSql(principal, 't');
  const rows = await em()
    .getConnection()
    .execute<Array<{ id: string }>>(
      `SELECT t.id FROM digital_twins t JOIN accounts a ON a.id = t.account_id
        WHERE t.id = ANY(?::uuid[]) AND ?::uuid = ANY(a.path) AND (${scope.sql})`,
      [uuidArray(twinIds), principal.accountId, ...scope.params],
    );
  return new Set(rows.map((r) => r.id));
}

/**
 * Which of the alarm `entries` the principal could read over the API: the entry's account is its
 * home account or a sub-account, and the entry is visible within its permission scopes (the alarm
 * domain's own rule, `visibleAlarmSql`: the referenced twin, device or gateway decides).
 */
export async function visibleAlarms(
  em: () => EntityManager,
  principal: Principal,
  entries: readonly AlarmEntry[],
): Promise<Set<string>> {
  if (entries.length === 0) return new Set();
  const scope = visibleAlarmSql(principal, 'al');
  const rows = await em()
    .getConnection()
    .execute<Array<{ id: string }>>(
      `SELECT al.id FROM alarm_logs al JOIN accounts a ON a.id = al.account_id
        WHERE al.id = ANY(?::uuid[]) AND ?::uuid = ANY(a.path) AND (${scope.sql})`,
      [uuidArray(entries.map((e) => e.id)), principal.accountId, ...scope.params],
    );
  return new Set(rows.map((r) => r.id));
}

/**
 * The principal behind a live connection as it stands now: its permissions and permission scopes
 * re-read (they may have changed since the socket opened), or null once the credential is no
 * longer valid (session revoked or expired, user deactivated, key inactive or deleted).
 */
export async function currentPrincipal(
  em: () => EntityManager,
  principal: Principal,
  now: Date,
): Promise<Principal | null> {
  const connection = em().getConnection();
  const rows = principal.sessionId
    ? await connection.execute<Array<{ permissions: string[] | null; scope_ids: string[] | null }>>(
        `SELECT (SELECT array_agg(DISTINCT p) FROM user_roles ur JOIN roles r ON r.id = ur.role_id, unnest(r.permissions) p
                  WHERE ur.user_id = u.id) AS permissions,
                (SELECT array_agg(ups.permission_scope_id) FROM user_permission_scopes ups WHERE ups.user_id = u.id) AS scope_ids
           FROM sessions s JOIN users u ON u.id = s.user_id
          WHERE s.id = ? AND s.revoked_at IS NULL AND s.expires_at > ? AND u.active`,
        [principal.sessionId, now],
      )
    : principal.apiKeyId
      ? await connection.execute<Array<{ permissions: string[] | null; scope_ids: null }>>(
          `SELECT permissions, NULL AS scope_ids FROM api_keys WHERE id = ? AND active`,
          [principal.apiKeyId],
        )
      : [];
  const row = rows[0];
  if (!row) return null;
  return {
    ...principal,
    permissions: expandPermissions(row.permissions ?? []),
    // As the auth hook reads them: no scopes is no restriction; API keys are never restricted.
    permissionScopeIds: row.scope_ids && row.scope_ids.length > 0 ? row.scope_ids : null,
  };
}

const uuidArray = (ids: readonly string[]): string => `{${ids.join(',')}}`;
