import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../server/src/platform/crypto/tokens.js';
import {
  apiKey,
  bearer,
  caller,
  errorCode,
  expectStatus,
  login,
  userWithPermissions,
  type Credentials,
  type ListBody,
} from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

interface KeyBody {
  id: string;
  accountId: string;
  title: string;
  prefix: string;
  permissions: string[];
  active: boolean;
  createdByUserId: string | null;
  key?: string;
}

let t: TestApp;
let admin: Credentials;
let call: ReturnType<typeof caller>;

beforeAll(async () => {
  t = await createTestApp();
  admin = bearer(await login(t));
  call = caller(t, admin);
});
afterAll(() => t.close());

const createKey = async (credentials: Credentials, body: Record<string, unknown>) =>
  expectStatus<KeyBody & { key: string }>(
    await caller(t, credentials)('POST', '/xapi/v1/api-keys', body),
    201,
  );

describe('API keys', () => {
  it('shows the key once: swk_ format, prefix kept, never in lists or reads', async () => {
    const created = await createKey(admin, { title: 'Gateway uplink', permissions: ['user.read'] });
    expect(created.key).toMatch(/^swk_[A-Za-z0-9_-]{43}$/);
    expect(created.prefix).toBe(created.key.slice(0, created.prefix.length));
    expect(created.prefix.length).toBeGreaterThanOrEqual(8);
    expect(created).toMatchObject({
      title: 'Gateway uplink',
      permissions: ['user.read'],
      active: true,
      accountId: t.rootAccountId,
    });
    expect(created.createdByUserId).toEqual(expect.any(String));

    const one = await call('GET', `/xapi/v1/api-keys/${created.id}`);
    const list = await call('GET', '/xapi/v1/api-keys');
    for (const response of [one, list]) {
      expectStatus(response, 200);
      expect(response.body).not.toContain(created.key);
      expect(response.body).not.toContain(sha256(created.key));
      expect(response.body).not.toMatch(/keyHash|key_hash|"key"/);
    }
    // The key authenticates as itself.
    expectStatus(await caller(t, apiKey(created.key))('GET', '/xapi/v1/users'), 200);
  });

  it('refuses an inactive key with 401 INVALID_TOKEN and accepts it again once reactivated', async () => {
    const created = await createKey(admin, {
      title: 'Switchable',
      permissions: ['user.read'],
      active: false,
    });
    expect(created.active).toBe(false);
    const k = caller(t, apiKey(created.key));
    const refused = await k('GET', '/xapi/v1/users');
    expect(refused.statusCode).toBe(401);
    expect(errorCode(refused)).toBe('INVALID_TOKEN');
    expectStatus(
      await call('PUT', `/xapi/v1/api-keys/${created.id}`, { active: true, title: 'Switched' }),
      200,
    );
    expectStatus(await k('GET', '/xapi/v1/users'), 200);
    expectStatus(await call('PUT', `/xapi/v1/api-keys/${created.id}`, { active: false }), 200);
    expect(errorCode(await k('GET', '/xapi/v1/users'))).toBe('INVALID_TOKEN');
    expect((await call('DELETE', `/xapi/v1/api-keys/${created.id}`)).statusCode).toBe(204);
    expect((await call('GET', `/xapi/v1/api-keys/${created.id}`)).statusCode).toBe(404);
    expect(errorCode(await k('GET', '/xapi/v1/users'))).toBe('INVALID_TOKEN');
  });

  it('lets a virtualDevice.manage key through where it holds the permission, and only there', async () => {
    const created = await createKey(admin, { title: 'Devices only', permissions: ['virtualDevice.manage'] });
    const k = caller(t, apiKey(created.key));
    const lacking = await k('GET', '/xapi/v1/users');
    expect(lacking.statusCode).toBe(403);
    expect(errorCode(lacking)).toBe('NO_PERMISSION_USER.READ');
    expectStatus(await k('GET', '/xapi/v1/permissions'), 200);

    // Granting what it holds (in any spelling) goes through; the permission check never says it lacks it.
    const maker = await createKey(admin, {
      title: 'Device key maker',
      permissions: ['virtualDevice.manage', 'apiKey.manage'],
    });
    const m = caller(t, apiKey(maker.key));
    const made = await m('POST', '/xapi/v1/api-keys', {
      title: 'Made by key',
      permissions: ['VirtualDevice.Manage', 'VirtualDevice.read'],
    });
    const body = expectStatus<KeyBody & { key: string }>(made, 201);
    expect(body.permissions).toEqual(['virtualDevice.manage', 'VirtualDevice.read']);
    expect(body.createdByUserId).toBeNull();
    expect(made.body).not.toContain('NO_PERMISSION_VIRTUALDEVICE.MANAGE');
    const escalate = await m('POST', '/xapi/v1/api-keys', {
      title: 'More',
      permissions: ['virtualDevice.manage', 'user.read'],
    });
    expect(escalate.statusCode).toBe(403);
    expect(errorCode(escalate)).toBe('NO_PERMISSION_USER.READ');
  });

  it('is not subject to mandatory 2FA, unlike the account’s users', async () => {
    const strict = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/accounts', { title: 'Strict Plant', mandatoryTwoFactor: true }),
      201,
    ).id;
    const created = await createKey(admin, {
      title: 'Strict key',
      permissions: ['user.read'],
      accountId: strict,
    });
    expect(created.accountId).toBe(strict);
    expectStatus(
      await call('POST', '/xapi/v1/users', {
        email: 'strict@stellwerk.test',
        password: 'strict user password',
        accountId: strict,
      }),
      201,
    );

    const userLogin = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/auth/login',
      payload: { email: 'strict@stellwerk.test', password: 'strict user password' },
    });
    expect(userLogin.statusCode).toBe(403);
    expect(errorCode(userLogin)).toBe('TWO_FACTOR_SETUP_REQUIRED');

    const viaKey = expectStatus<ListBody<{ email: string }>>(
      await caller(t, apiKey(created.key))('GET', '/xapi/v1/users'),
      200,
    );
    expect(viaKey.data.map((u) => u.email)).toEqual(['strict@stellwerk.test']);
  });

  it('lets creators grant only permissions they hold, and not touch stronger keys', async () => {
    const keeper = await userWithPermissions(t, admin, 'Key Keeper', ['apiKey.manage', 'user.read']);
    const k = caller(t, bearer(keeper.token));
    const escalate = await k('POST', '/xapi/v1/api-keys', {
      title: 'All of it',
      permissions: ['all.manage'],
    });
    expect(escalate.statusCode).toBe(403);
    expect(errorCode(escalate)).toBe('NO_PERMISSION_ALL.MANAGE');
    const own = await createKey(bearer(keeper.token), { title: 'Reader key', permissions: ['user.READ'] });
    expect(own.permissions).toEqual(['user.read']);
    expect(own.createdByUserId).toBe(keeper.id);
    expect(errorCode(await k('PUT', `/xapi/v1/api-keys/${own.id}`, { permissions: ['user.manage'] }))).toBe(
      'NO_PERMISSION_USER.MANAGE',
    );

    const strong = await createKey(admin, { title: 'Admin key', permissions: ['all.manage'] });
    const touch = await k('PUT', `/xapi/v1/api-keys/${strong.id}`, { active: false });
    expect(touch.statusCode).toBe(403);
    expect(errorCode(touch)).toBe('NO_PERMISSION_ALL.MANAGE');
    expect(errorCode(await k('DELETE', `/xapi/v1/api-keys/${strong.id}`))).toBe('NO_PERMISSION_ALL.MANAGE');
    expectStatus(await caller(t, apiKey(strong.key))('GET', '/xapi/v1/users'), 200);
  });

  it('validates permission names and needs apiKey.read / apiKey.manage', async () => {
    const unknown = await call('POST', '/xapi/v1/api-keys', { title: 'Bad', permissions: ['twin.fly'] });
    expect(unknown.statusCode).toBe(400);
    expect(errorCode(unknown)).toBe('VALIDATION_ERROR');
    expect(unknown.body).toContain('twin.fly');

    const reader = await userWithPermissions(t, admin, 'Key Reader', ['apiKey.read']);
    const r = caller(t, bearer(reader.token));
    expectStatus(await r('GET', '/xapi/v1/api-keys'), 200);
    expect(errorCode(await r('POST', '/xapi/v1/api-keys', { title: 'x', permissions: [] }))).toBe(
      'NO_PERMISSION_APIKEY.MANAGE',
    );
    const none = await userWithPermissions(t, admin, 'No Key Reader', ['user.read']);
    expect(errorCode(await caller(t, bearer(none.token))('GET', '/xapi/v1/api-keys'))).toBe(
      'NO_PERMISSION_APIKEY.READ',
    );
  });

  it('keeps keys inside their account tree', async () => {
    const a = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/accounts', { title: 'Key Plant A' }),
      201,
    ).id;
    const b = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/accounts', { title: 'Key Plant B' }),
      201,
    ).id;
    const bKey = await createKey(admin, { title: 'B key', permissions: [], accountId: b });
    const local = await userWithPermissions(t, admin, 'A Key Admin', ['apiKey.manage'], { accountId: a });
    const l = caller(t, bearer(local.token));
    expect((await l('GET', `/xapi/v1/api-keys/${bKey.id}`)).statusCode).toBe(404);
    expect((await l('PUT', `/xapi/v1/api-keys/${bKey.id}`, { title: 'mine' })).statusCode).toBe(404);
    expect((await l('GET', `/xapi/v1/api-keys?accountId=${b}`)).statusCode).toBe(404);
    const aKey = await createKey(bearer(local.token), { title: 'A key', permissions: ['apiKey.read'] });
    expect(aKey.accountId).toBe(a);
    const aList = expectStatus<ListBody<KeyBody>>(
      await caller(t, apiKey(aKey.key))('GET', '/xapi/v1/api-keys'),
      200,
    );
    expect(aList.data.map((k) => k.title)).toEqual(['A key']);
  });

  it('sorts and pages key lists', async () => {
    for (const title of ['Sortkey B', 'Sortkey C', 'Sortkey A'])
      await createKey(admin, { title, permissions: [] });
    const titles = async (query: string) =>
      expectStatus<ListBody<KeyBody>>(
        await call('GET', `/xapi/v1/api-keys?searchItems=sortkey&${query}`),
        200,
      ).data.map((k) => k.title);
    expect(await titles('sort=title')).toEqual(['Sortkey A', 'Sortkey B', 'Sortkey C']);
    expect(await titles('sort=+title')).toEqual(['Sortkey A', 'Sortkey B', 'Sortkey C']);
    expect(await titles('sort=-title')).toEqual(['Sortkey C', 'Sortkey B', 'Sortkey A']);
    expect(await titles('sort=title&pageSize=2&page=2')).toEqual(['Sortkey C']);
    expect(await titles('pageSize=2&page=3')).toEqual([]);
  });
});
