import { errors } from '../platform/errors.js';
import { grants } from '../roles/permissions.js';

/** Who is calling, resolved once per request by the auth hook. */
export interface Principal {
  kind: 'user' | 'apiKey';
  /** The user, or for API keys the key's id. */
  id: string;
  userId: string | null;
  apiKeyId: string | null;
  /** Home account: the principal may work in it and in its sub-accounts, never above or beside. */
  accountId: string;
  /** Expanded, lower-cased. */
  permissions: ReadonlySet<string>;
  /** Access areas restricting twins and devices; null means the whole account. */
  permissionScopeIds: string[] | null;
  sessionId: string | null;
}

export function requirePermission(principal: Principal, permission: string): void {
  if (!grants(principal.permissions, permission)) throw errors.noPermission(permission);
}

export const hasPermission = (principal: Principal, permission: string): boolean =>
  grants(principal.permissions, permission);
