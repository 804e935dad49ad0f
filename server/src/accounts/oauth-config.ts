import { requirePermission, type Principal } from '../auth/principal.js';
import type { AuditRecord } from '../audit/audit.service.js';
import { actorOf } from '../audit/audit.service.js';
import type { SecretBox } from '../platform/crypto/secret-box.js';
import { errors } from '../platform/errors.js';
import { BUILT_IN_ROLES } from '../roles/permissions.js';
import { assertMayGrant, scopeRestricted } from '../roles/privileges.js';
import type { Account, OAuthConfigAuthor, StoredOAuthConfig } from './account.entity.js';

/**
 * Changing an account's identity provider decides who may become which user of the account, so
 * it has a permission of its own that account.manage does not imply (docs/adr/0033).
 */
export const IDENTITY_PROVIDER_PERMISSION = 'identityProvider.manage';

/** Role of users created at their first federated login when the configuration names none. */
export const DEFAULT_FEDERATED_ROLE = 'AccountReader';

export const SECRET_MASK = '********';

export interface OAuthConfigInput {
  scope: string;
  auth_uri: string;
  client_id: string;
  token_uri: string;
  redirect_uri: string;
  client_secret?: string;
  user_info_uri: string;
  issuer?: string;
  default_role?: string;
  trust_provider_mfa?: boolean;
}

/** Reply form: the client secret masked, the author left out (the audit log names who saved it). */
export type PublicOAuthConfig = Omit<OAuthConfigInput, 'trust_provider_mfa'> & {
  trust_provider_mfa: boolean;
};

/** Built-in role a configuration hands to new users. */
export const federatedDefaultRole = (oauth: Pick<StoredOAuthConfig, 'default_role'>): string =>
  oauth.default_role?.trim() || DEFAULT_FEDERATED_ROLE;

/**
 * May the principal set (or remove) an account's OAuth configuration at all: it needs the
 * identity-provider permission and must not be restricted to permission scopes (federated login
 * creates users of the whole account). Checked before the input is looked at.
 */
export function assertMayConfigureIdentityProvider(principal: Principal): void {
  requirePermission(principal, IDENTITY_PROVIDER_PERMISSION);
  if (principal.permissionScopeIds !== null) {
    throw scopeRestricted(
      'Federated login creates users of the whole account; a user restricted to permission scopes cannot configure it',
    );
  }
}

/** Validates the input and seals the secret; the principal becomes the configuration's author. */
export function storedOAuthConfig(
  principal: Principal,
  account: Account,
  input: OAuthConfigInput,
  deps: { publicUrl: string; secretBox: SecretBox; now: Date },
): StoredOAuthConfig {
  const expected = `${deps.publicUrl}/api/v1/oauth2/callback`;
  for (const field of ['auth_uri', 'token_uri', 'user_info_uri', 'redirect_uri'] as const) {
    if (!isHttpUrl(input[field])) {
      throw errors.validation(`oauthConfig.${field} must be an http(s) URL`, [
        { path: `/oauthConfig/${field}` },
      ]);
    }
  }
  if (input.issuer !== undefined && !isHttpUrl(input.issuer)) {
    throw errors.validation('oauthConfig.issuer must be an http(s) URL', [{ path: '/oauthConfig/issuer' }]);
  }
  if (input.redirect_uri.replace(/\/+$/, '') !== expected) {
    throw errors.validation(
      `oauthConfig.redirect_uri must be ${expected}: the callback on the domain users log in through`,
      [{ path: '/oauthConfig/redirect_uri', expected }],
    );
  }
  const roleName = federatedDefaultRole(input);
  const role = BUILT_IN_ROLES.find((r) => r.name === roleName);
  if (!role) {
    throw errors.unprocessable(
      'OAUTH_DEFAULT_ROLE_NOT_FOUND',
      `oauthConfig.default_role "${roleName}" is not a built-in role`,
      [{ path: '/oauthConfig/default_role' }],
    );
  }
  // Everyone who can log in at the provider gets this role: the author must be able to grant it.
  assertMayGrant(principal, role.permissions);
  const keepSecret = input.client_secret === undefined || input.client_secret === SECRET_MASK;
  const sealed = keepSecret
    ? account.oauthConfig?.client_secret_sealed
    : deps.secretBox.seal(input.client_secret!);
  if (!sealed) {
    throw errors.validation('oauthConfig.client_secret is required', [
      { path: '/oauthConfig/client_secret' },
    ]);
  }
  const { client_secret: _secret, trust_provider_mfa, ...rest } = input;
  const author: OAuthConfigAuthor = {
    kind: principal.kind,
    id: principal.id,
    permissions: [...principal.permissions].sort(),
    savedAt: deps.now.toISOString(),
  };
  return {
    ...rest,
    redirect_uri: expected,
    trust_provider_mfa: trust_provider_mfa ?? false,
    client_secret_sealed: sealed,
    author,
  };
}

export function publicOAuthConfig(oauth: StoredOAuthConfig | null): PublicOAuthConfig | null {
  if (!oauth) return null;
  const { client_secret_sealed: _sealed, author: _author, trust_provider_mfa, ...rest } = oauth;
  return { ...rest, trust_provider_mfa: trust_provider_mfa ?? false, client_secret: SECRET_MASK };
}

/** The audit event for a change of the configuration (none when nothing changed). */
export function oauthConfigChange(
  principal: Principal,
  account: Account,
  before: StoredOAuthConfig | null,
  after: StoredOAuthConfig | null,
): AuditRecord | null {
  const base = {
    accountId: account.id,
    actor: actorOf(principal),
    target: { type: 'account', id: account.id },
  };
  if (!after) return before ? { ...base, action: 'account.oauthConfig.remove', details: {} } : null;
  const was = publicOAuthConfig(before) as Record<string, unknown> | null;
  const { client_secret: _masked, ...now } = publicOAuthConfig(after) as Record<string, unknown>;
  const fields = new Set([...Object.keys(now), ...Object.keys(was ?? {})]);
  const changed = [...fields].filter((f) => f !== 'client_secret' && was?.[f] !== now[f]).sort();
  const secretChanged = before?.client_secret_sealed !== after.client_secret_sealed;
  return {
    ...base,
    action: 'account.oauthConfig.change',
    details: {
      changed: secretChanged ? [...changed, 'client_secret'] : changed,
      config: now,
    },
  };
}

export function isHttpUrl(value: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}
