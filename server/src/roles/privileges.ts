import type { Principal } from '../auth/principal.js';
import { errors } from '../platform/errors.js';
import { canonicalPermission, mayGrant } from './permissions.js';

/**
 * The no-escalation rules (docs/adr/0010): nobody hands out a permission they do not hold, and
 * nobody changes a user or key that holds more than they do. Pure functions, so the rules are
 * unit-tested apart from the routes that apply them.
 */

/** Canonical spelling of each name, duplicates dropped; an unknown name is a VALIDATION_ERROR naming it. */
export function normalisePermissions(names: readonly string[], path = '/permissions'): string[] {
  const result: string[] = [];
  names.forEach((name, index) => {
    const canonical = canonicalPermission(name.trim());
    if (!canonical) {
      throw errors.validation(`Unknown permission "${name}"; GET /xapi/v1/permissions lists them`, [
        { path: `${path}/${index}`, permission: name },
      ]);
    }
    if (!result.includes(canonical)) result.push(canonical);
  });
  return result;
}

/**
 * The permissions in `wanted` that the holder of `held` (expanded) may not hand out. The hub
 * permissions must be held, not merely covered by all.read (`mayGrant`).
 */
export const missingPermissions = (held: ReadonlySet<string>, wanted: Iterable<string>): string[] =>
  [...new Set(wanted)].filter((p) => !mayGrant(held, p));

/** Refuses with 403 NO_PERMISSION_<P> for the first permission the principal could not use itself. */
export function assertMayGrant(principal: Principal, permissions: Iterable<string>): void {
  const [missing] = missingPermissions(principal.permissions, permissions);
  if (missing) throw errors.noPermission(missing);
}

/** Whether `inner` (null: unrestricted) lies within the principal's scopes. */
export function scopesWithin(
  principalScopes: readonly string[] | null,
  inner: readonly string[] | null,
): boolean {
  if (principalScopes === null) return true;
  return inner !== null && inner.length > 0 && inner.every((id) => principalScopes.includes(id));
}

export const scopeRestricted = (message: string) => errors.forbidden('PERMISSION_SCOPE_RESTRICTED', message);

/**
 * A principal may change or delete a user or key only if it holds everything the target holds
 * and, when itself restricted to permission scopes, the target is restricted to some of them.
 */
export function assertOutranks(
  principal: Principal,
  target: { permissions: Iterable<string>; permissionScopeIds: readonly string[] | null },
): void {
  assertMayGrant(principal, target.permissions);
  if (!scopesWithin(principal.permissionScopeIds, target.permissionScopeIds)) {
    throw scopeRestricted('The target reaches beyond the permission scopes you are restricted to');
  }
}
