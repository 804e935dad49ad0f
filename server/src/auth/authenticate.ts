import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyRequest } from 'fastify';
import { sha256 } from '../platform/crypto/tokens.js';
import { errors } from '../platform/errors.js';
import type { AuthMode } from '../platform/http/route-config.js';
import { expandPermissions, HUB_PERMISSIONS } from '../roles/permissions.js';
import { presentedCredential } from './credential.js';
import type { Principal } from './principal.js';

export { SESSION_COOKIE_PLAIN, SESSION_COOKIE_SECURE } from './credential.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

interface SessionRow {
  session_id: string;
  kind: string;
  user_id: string;
  account_id: string;
  user_active: boolean;
  totp_enabled: boolean;
  has_password: boolean;
  mandatory_two_factor: boolean;
  permissions: string[] | null;
  scope_ids: string[] | null;
}

interface ApiKeyRow {
  id: string;
  account_id: string;
  active: boolean;
  permissions: string[];
}

const SESSION_SQL = `
  SELECT s.id AS session_id, s.kind, u.id AS user_id, u.account_id, u.active AS user_active, u.totp_enabled,
         u.password_hash IS NOT NULL AS has_password,
         a.mandatory_two_factor,
         (SELECT array_agg(DISTINCT p) FROM user_roles ur JOIN roles r ON r.id = ur.role_id, unnest(r.permissions) p
           WHERE ur.user_id = u.id) AS permissions,
         (SELECT array_agg(ups.permission_scope_id) FROM user_permission_scopes ups WHERE ups.user_id = u.id) AS scope_ids
    FROM sessions s JOIN users u ON u.id = s.user_id JOIN accounts a ON a.id = u.account_id
   WHERE s.token_hash = ? AND s.revoked_at IS NULL AND s.expires_at > ?`;

const LAST_USED_PRECISION_MS = 60_000;

const API_KEY_SQL = `SELECT id, account_id, active, permissions FROM api_keys WHERE key_hash = ?`;

export interface Authenticator {
  authenticate(request: FastifyRequest, mode: AuthMode): Promise<Principal | null>;
}

/**
 * Resolves the caller from `x-api-key`, `Authorization: Bearer` or the console cookie in one
 * query each. Mandatory 2FA is enforced here, so no route can forget it; API keys are exempt.
 * `clock` (not the database's now()) decides expiry, so tests can move time without sleeping.
 */
export function createAuthenticator(
  em: () => EntityManager,
  clock: () => Date = () => new Date(),
): Authenticator {
  const sql = <T>(query: string, params: unknown[]) => em().getConnection().execute<T[]>(query, params);
  // When this process last recorded each key's use: `last_used_at` is kept to the minute, so a key
  // used on every request costs one UPDATE a minute instead of one per request.
  const lastUseRecorded = new Map<string, number>();

  function recordUse(keyId: string): void {
    const at = Date.now();
    if (at - (lastUseRecorded.get(keyId) ?? -Infinity) < LAST_USED_PRECISION_MS) return;
    if (lastUseRecorded.size >= 10_000) lastUseRecorded.clear();
    lastUseRecorded.set(keyId, at);
    void sql(
      "UPDATE api_keys SET last_used_at = now() WHERE id = ? AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')",
      [keyId],
    ).catch(() => lastUseRecorded.delete(keyId));
  }

  async function fromApiKey(key: string): Promise<Principal> {
    const [row] = await sql<ApiKeyRow>(API_KEY_SQL, [sha256(key)]);
    if (!row) throw errors.invalidToken('Invalid API key');
    if (!row.active) throw errors.invalidToken('API key is inactive');
    recordUse(row.id);
    return {
      kind: 'apiKey',
      id: row.id,
      userId: null,
      apiKeyId: row.id,
      accountId: row.account_id,
      permissions: expandPermissions(row.permissions),
      permissionScopeIds: null,
      sessionId: null,
    };
  }

  /** Any session kind is recognised, so a setup token used elsewhere answers TWO_FACTOR_SETUP_REQUIRED. */
  async function fromSession(token: string, mode: AuthMode): Promise<Principal> {
    const [row] = await sql<SessionRow>(SESSION_SQL, [sha256(token), clock()]);
    if (!row) throw errors.invalidToken();
    if (!row.user_active) throw errors.invalidToken('User is deactivated');
    const principal: Principal = {
      kind: 'user',
      id: row.user_id,
      userId: row.user_id,
      apiKeyId: null,
      accountId: row.account_id,
      permissions: expandPermissions(row.permissions ?? []),
      permissionScopeIds: row.scope_ids && row.scope_ids.length > 0 ? row.scope_ids : null,
      sessionId: row.session_id,
    };
    const setupOnly = row.kind === 'setup';
    // Password-less (federated) users are exempt: their provider authenticates them (docs/adr/0031).
    const mustEnrol = row.mandatory_two_factor && !row.totp_enabled && row.has_password;
    if ((setupOnly || mustEnrol) && mode !== 'enrolment') {
      throw errors.forbidden(
        'TWO_FACTOR_SETUP_REQUIRED',
        'Two-factor authentication must be set up before access',
      );
    }
    return principal;
  }

  return {
    async authenticate(request, mode) {
      if (mode === 'public' || mode === 'dashboardKey') return null;
      const credential = presentedCredential(request, mode);
      if (mode === 'hub') {
        if (!credential) throw errors.invalidToken('The hub API needs an x-api-key header');
        const principal = await fromApiKey(credential.secret);
        // Held permissions only, not `grants()`: all.read must not open the hub API (spec 3.6.4).
        if (!HUB_PERMISSIONS.some((p) => principal.permissions.has(p.toLowerCase()))) {
          throw errors.noPermission('IotHub.read');
        }
        return principal;
      }
      if (!credential) throw errors.invalidToken('Authentication required');
      if (credential.kind === 'apiKey') {
        if (mode === 'user' || mode === 'enrolment' || mode === 'optionalUser') {
          throw errors.forbidden('USER_REQUIRED', 'This route needs a signed-in user, not an API key');
        }
        return fromApiKey(credential.secret);
      }
      return fromSession(credential.secret, mode);
    },
  };
}
