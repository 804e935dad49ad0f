import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';

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

/** Whether the credential behind a live connection is still valid (session not revoked or expired, key active). */
export async function credentialValid(
  em: () => EntityManager,
  principal: Principal,
  now: Date,
): Promise<boolean> {
  const connection = em().getConnection();
  if (principal.sessionId) {
    const rows = await connection.execute<unknown[]>(
      `SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE s.id = ? AND s.revoked_at IS NULL AND s.expires_at > ? AND u.active`,
      [principal.sessionId, now],
    );
    return rows.length > 0;
  }
  if (principal.apiKeyId) {
    const rows = await connection.execute<unknown[]>(`SELECT 1 FROM api_keys WHERE id = ? AND active`, [
      principal.apiKeyId,
    ]);
    return rows.length > 0;
  }
  return false;
}

const uuidArray = (ids: readonly string[]): string => `{${ids.join(',')}}`;
