import { describe, expect, it } from 'vitest';
import type { Principal } from '../auth/principal.js';
import { AppError } from '../platform/errors.js';
import { expandPermissions, HUB_ONLY_PERMISSIONS, HUB_PERMISSIONS, PERMISSIONS } from './permissions.js';
import {
  assertMayGrant,
  assertOutranks,
  missingPermissions,
  normalisePermissions,
  scopesWithin,
} from './privileges.js';

const principal = (held: string[], permissionScopeIds: string[] | null = null): Principal => ({
  kind: 'user',
  id: 'u',
  userId: 'u',
  apiKeyId: null,
  accountId: 'a',
  permissions: expandPermissions(held),
  permissionScopeIds,
  sessionId: null,
});

const codeOf = (fn: () => void): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error instanceof AppError ? error.code : 'not an AppError';
  }
};

describe('normalisePermissions', () => {
  it('stores the canonical spelling once', () => {
    expect(
      normalisePermissions([
        'VIRTUALDEVICE.MANAGE',
        'virtualdevice.read',
        'virtualDevice.manage',
        ' iothub.read ',
      ]),
    ).toEqual(['virtualDevice.manage', 'VirtualDevice.read', 'IotHub.read']);
  });

  it('names an unknown permission in a VALIDATION_ERROR', () => {
    try {
      normalisePermissions(['user.read', 'user.fly']);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe('VALIDATION_ERROR');
      expect((error as AppError).message).toContain('user.fly');
      expect((error as AppError).details).toEqual([{ path: '/permissions/1', permission: 'user.fly' }]);
    }
  });
});

describe('assertMayGrant', () => {
  it('allows what is held, directly or implied, in any spelling', () => {
    const p = principal(['virtualDevice.manage', 'Integration.manage']);
    expect(
      codeOf(() =>
        assertMayGrant(p, ['VirtualDevice.manage', 'VirtualDevice.read', 'connector.manage', 'filter.read']),
      ),
    ).toBeUndefined();
  });

  it('refuses the first missing permission with NO_PERMISSION_<P>', () => {
    expect(codeOf(() => assertMayGrant(principal(['user.manage']), ['user.read', 'all.manage']))).toBe(
      'NO_PERMISSION_ALL.MANAGE',
    );
    expect(codeOf(() => assertMayGrant(principal(['all.read']), ['user.read', 'user.manage']))).toBe(
      'NO_PERMISSION_USER.MANAGE',
    );
  });

  it('lets all.manage grant anything', () => {
    expect(
      missingPermissions(expandPermissions(['all.manage']), ['IotHub.manage', 'user.manage', 'all.read']),
    ).toEqual([]);
  });
});

describe('hub permissions are granted only by holders', () => {
  /** What the hub API checks: one of HUB_PERMISSIONS held, not merely covered by all.read. */
  const opensHubApi = (held: ReadonlySet<string>) => HUB_PERMISSIONS.some((p) => held.has(p.toLowerCase()));

  it.each(HUB_ONLY_PERMISSIONS)('all.read does not let anyone hand out %s', (hub) => {
    for (const extra of ['user.manage', 'role.manage', 'apiKey.manage', 'UserManagement.create']) {
      const p = principal(['all.read', extra]);
      expect(missingPermissions(p.permissions, [hub])).toEqual([hub]);
      expect(codeOf(() => assertMayGrant(p, [hub]))).toBe(`NO_PERMISSION_${hub.toUpperCase()}`);
      expect(codeOf(() => assertMayGrant(p, [hub.toLowerCase()]))).toBe(`NO_PERMISSION_${hub.toUpperCase()}`);
    }
  });

  it.each(HUB_ONLY_PERMISSIONS)('an all.read principal does not outrank a holder of %s', (hub) => {
    const p = principal(['all.read', 'user.manage', 'apiKey.manage']);
    expect(codeOf(() => assertOutranks(p, { permissions: [hub], permissionScopeIds: null }))).toBe(
      `NO_PERMISSION_${hub.toUpperCase()}`,
    );
  });

  it('lets holders hand them out: all.manage both, IotHub.manage both, IotHub.read only itself', () => {
    expect(missingPermissions(expandPermissions(['all.manage']), HUB_ONLY_PERMISSIONS)).toEqual([]);
    expect(missingPermissions(expandPermissions(['IotHub.manage']), HUB_ONLY_PERMISSIONS)).toEqual([]);
    expect(missingPermissions(expandPermissions(['all.read', 'IotHub.read']), HUB_ONLY_PERMISSIONS)).toEqual([
      'IotHub.manage',
    ]);
  });

  it('never lets a principal the hub API refuses make something the hub API accepts', () => {
    const candidates = [...PERMISSIONS.map((p) => [p]), ...PERMISSIONS.map((p) => ['all.read', p])];
    for (const held of candidates) {
      const expanded = expandPermissions(held);
      if (opensHubApi(expanded)) continue;
      for (const hub of HUB_PERMISSIONS) {
        expect(missingPermissions(expanded, [hub]), `${held.join('+')} → ${hub}`).toEqual([hub]);
      }
    }
  });
});

describe('assertOutranks', () => {
  it('refuses changing a target holding more', () => {
    expect(
      codeOf(() =>
        assertOutranks(principal(['user.manage']), { permissions: ['all.manage'], permissionScopeIds: null }),
      ),
    ).toBe('NO_PERMISSION_ALL.MANAGE');
    expect(
      codeOf(() =>
        assertOutranks(principal(['user.manage']), { permissions: ['user.read'], permissionScopeIds: null }),
      ),
    ).toBeUndefined();
  });

  it('keeps restricted principals to targets within their scopes', () => {
    const p = principal(['all.manage'], ['s1', 's2']);
    expect(codeOf(() => assertOutranks(p, { permissions: [], permissionScopeIds: null }))).toBe(
      'PERMISSION_SCOPE_RESTRICTED',
    );
    expect(codeOf(() => assertOutranks(p, { permissions: [], permissionScopeIds: ['s3'] }))).toBe(
      'PERMISSION_SCOPE_RESTRICTED',
    );
    expect(codeOf(() => assertOutranks(p, { permissions: [], permissionScopeIds: ['s2'] }))).toBeUndefined();
  });

  it('scopesWithin: unrestricted contains everything; restricted never contains unrestricted', () => {
    expect(scopesWithin(null, null)).toBe(true);
    expect(scopesWithin(null, ['x'])).toBe(true);
    expect(scopesWithin(['x'], null)).toBe(false);
    expect(scopesWithin(['x'], [])).toBe(false);
    expect(scopesWithin(['x', 'y'], ['y'])).toBe(true);
  });
});
