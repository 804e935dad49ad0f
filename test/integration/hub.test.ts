import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HUB_ONLY_PERMISSIONS } from '../../server/src/roles/permissions.js';
import {
  bearer,
  caller,
  errorCode,
  expectStatus,
  login,
  userWithPermissions,
  type Credentials,
} from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let t: TestApp;
let admin: Credentials;
let plant: string;

beforeAll(async () => {
  t = await createTestApp();
  admin = bearer(await login(t));
  plant = expectStatus<{ id: string }>(
    await caller(t, admin)('POST', '/xapi/v1/accounts', { title: 'Hub Plant' }),
    201,
  ).id;
});
afterAll(() => t.close());

const keyWith = async (permissions: string[], extra: Record<string, unknown> = {}) =>
  expectStatus<{ id: string; key: string }>(
    await caller(t, admin)('POST', '/xapi/v1/api-keys', {
      title: `hub ${permissions.join(' ')}`,
      permissions,
      accountId: plant,
      ...extra,
    }),
    201,
  );

const hubAccount = (headers: Record<string, string>) => t.app.inject({ url: '/hub/api/v1/account', headers });

describe('hub API keys', () => {
  it.each([['IotHub.manage'], ['IotHub.read'], ['all.manage'], ['iothub.READ']])(
    'accepts a key holding %s',
    async (permission) => {
      const { key } = await keyWith([permission]);
      const body = expectStatus<{ id: string; title: string }>(await hubAccount({ 'x-api-key': key }), 200);
      expect(body).toEqual({ id: plant, title: 'Hub Plant' });
    },
  );

  it('refuses a key with other permissions only: 403 NO_PERMISSION_IOTHUB.READ', async () => {
    for (const permissions of [
      ['VirtualDevice.read'],
      ['all.read'],
      ['virtualDevice.manage', 'Integration.manage'],
      [],
    ]) {
      const { key } = await keyWith(permissions);
      const response = await hubAccount({ 'x-api-key': key });
      expect(response.statusCode).toBe(403);
      expect(errorCode(response)).toBe('NO_PERMISSION_IOTHUB.READ');
    }
  });

  it('refuses a bearer token without a key, no credentials, unknown and inactive keys with 401', async () => {
    const token = (admin as { authorization: string }).authorization;
    const inactive = await keyWith(['IotHub.manage'], { active: false });
    const cases: Array<Record<string, string>> = [
      { authorization: token },
      {},
      { 'x-api-key': 'swk_not-a-real-key' },
      { 'x-api-key': inactive.key },
    ];
    for (const headers of cases) {
      const response = await hubAccount(headers);
      expect(response.statusCode).toBe(401);
      expect(errorCode(response)).toBe('INVALID_TOKEN');
    }
  });

  it.each(HUB_ONLY_PERMISSIONS)(
    'an all.read identity manager cannot hand out %s: not on a key, a role or a user',
    async (hub) => {
      const reader = await userWithPermissions(t, admin, `Hub reader ${hub}`, [
        'all.read',
        'apiKey.manage',
        'role.manage',
        'user.manage',
      ]);
      const call = caller(t, bearer(reader.token));
      const code = `NO_PERMISSION_${hub.toUpperCase()}`;

      const key = await call('POST', '/xapi/v1/api-keys', { title: 'sneaky', permissions: [hub] });
      expect(key.statusCode, key.body).toBe(403);
      expect(errorCode(key)).toBe(code);
      const role = await call('POST', '/xapi/v1/roles', { name: `sneaky ${hub}`, permissions: [hub] });
      expect(role.statusCode, role.body).toBe(403);
      expect(errorCode(role)).toBe(code);

      // A role the administrator made: the reader may neither give it to someone nor change a key holding it.
      const hubRole = expectStatus<{ id: string }>(
        await caller(t, admin)('POST', '/xapi/v1/roles', { name: `hub role ${hub}`, permissions: [hub] }),
        201,
      );
      const created = await call('POST', '/xapi/v1/users', {
        email: `hub-${hub.replace('.', '-').toLowerCase()}@stellwerk.test`,
        roleIds: [hubRole.id],
        suppressInvitation: true,
      });
      expect(created.statusCode, created.body).toBe(403);
      expect(errorCode(created)).toBe(code);
      const assigned = await call('PUT', `/xapi/v1/users/${reader.id}/roles/${hubRole.id}`);
      expect(assigned.statusCode, assigned.body).toBe(403);
      expect(errorCode(assigned)).toBe(code);
      const adminKey = await keyWith([hub]);
      const deactivated = await call('PUT', `/xapi/v1/api-keys/${adminKey.id}`, { active: false });
      expect(deactivated.statusCode, deactivated.body).toBe(403);
    },
  );
});
