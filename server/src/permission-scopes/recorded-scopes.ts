import type { FilterQuery } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { scopesWithin } from '../roles/privileges.js';

/**
 * Objects that act on their own later — rules, alarm reports — cannot ask a caller what it may
 * see when they run. They record the permission scopes of the principal who last saved them
 * (null: unrestricted, a user without scopes or an API key) and run only over twins and devices
 * of those scopes (docs/permission-scopes.md, "Unattended objects").
 *
 * Readers: a restricted reader sees such an object only when it is restricted to scopes all of
 * which the reader has; what it did can then only concern objects the reader sees as well. An
 * unrestricted object is like a twin without a scope: seen by unrestricted readers only.
 */
export type RecordedScopes = string[] | null;

type Scoped = Pick<Principal, 'permissionScopeIds'>;

/** What an object saved by `principal` records. */
export const recordScopes = (principal: Scoped): RecordedScopes =>
  principal.permissionScopeIds === null ? null : [...principal.permissionScopeIds];

/** Whether `reader` sees an object that records `recorded`. */
export const seesRecorded = (reader: Scoped, recorded: RecordedScopes): boolean =>
  scopesWithin(reader.permissionScopeIds, recorded);

/** The list form of `seesRecorded` on the property holding the recorded scopes. */
export function recordedWithin<T extends object>(reader: Scoped, property: string): FilterQuery<T> {
  const scopes = reader.permissionScopeIds;
  if (scopes === null) return {};
  // `<@` holds for an empty array too; a recorded restriction is never empty (see recordScopes).
  return { [property]: { $ne: null, $contained: [...scopes] } } as FilterQuery<T>;
}

/** Whether two recorded restrictions are the same set of scopes. */
export function sameScopes(a: RecordedScopes, b: RecordedScopes): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((id) => b.includes(id));
}
