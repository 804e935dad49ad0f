import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  type UserBody,
  builtInRoleIds,
} from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let t: TestApp;
let admin: Credentials;
let call: ReturnType<typeof caller>;
let builtIn: Record<string, string> = {};

beforeAll(async () => {
  t = await createTestApp();
  admin = bearer(await login(t));
  call = caller(t, admin);
  builtIn = await builtInRoleIds(call);
});
afterAll(() => t.close());

const createAccount = async (title: string, parentId?: string) =>
  expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/accounts', { title, ...(parentId ? { parentId } : {}) }),
    201,
  ).id;

describe('users: create, read, update, delete', () => {
  it('creates a user with roles and never shows secrets', async () => {
    const created = await call('POST', '/xapi/v1/users', {
      email: 'Reader.One@Stellwerk.test',
      name: 'Reader One',
      password: 'reader one password',
      roleIds: [builtIn.AccountReader],
      locale: 'de',
    });
    const body = expectStatus<UserBody>(created, 201);
    expect(body).toMatchObject({
      email: 'reader.one@stellwerk.test',
      name: 'Reader One',
      locale: 'de',
      active: true,
      roleIds: [builtIn.AccountReader],
      passwordSet: true,
      invitation: null,
      accountId: t.rootAccountId,
    });
    const one = await call('GET', `/xapi/v1/users/${body.id}`);
    expectStatus(one, 200);
    for (const response of [created, one, await call('GET', '/xapi/v1/users?pageSize=500')]) {
      expect(response.body).not.toMatch(
        /argon2|passwordHash|password_hash|totpSecret|totp_secret|totpLastStep/i,
      );
    }
  });

  it('refuses a second user with the same e-mail (any case)', async () => {
    const again = await call('POST', '/xapi/v1/users', {
      email: 'READER.ONE@stellwerk.test',
      suppressInvitation: true,
    });
    expect(again.statusCode).toBe(409);
    expect(errorCode(again)).toBe('EMAIL_TAKEN');
  });

  it('updates name, locale and active; a deactivated user is locked out at once', async () => {
    const u = await userWithPermissions(t, admin, 'Temp Worker', ['user.read']);
    expectStatus(await caller(t, bearer(u.token))('GET', '/xapi/v1/users'), 200);
    const updated = expectStatus<UserBody>(
      await call('PUT', `/xapi/v1/users/${u.id}`, { name: 'Temp Worker 2', locale: 'fr', active: false }),
      200,
    );
    expect(updated).toMatchObject({
      name: 'Temp Worker 2',
      locale: 'fr',
      active: false,
      roleIds: [u.roleId],
    });
    const refused = await caller(t, bearer(u.token))('GET', '/xapi/v1/users');
    expect(refused.statusCode).toBe(401);
    expect(errorCode(refused)).toBe('INVALID_TOKEN');
  });

  it('deletes a user; the caller cannot delete or deactivate itself', async () => {
    const u = expectStatus<UserBody>(
      await call('POST', '/xapi/v1/users', { email: 'gone@stellwerk.test', suppressInvitation: true }),
      201,
    );
    expect((await call('DELETE', `/xapi/v1/users/${u.id}`)).statusCode).toBe(204);
    const gone = await call('GET', `/xapi/v1/users/${u.id}`);
    expect(gone.statusCode).toBe(404);
    expect(errorCode(gone)).toBe('NOT_FOUND');

    const me = expectStatus<UserBody>(await call('GET', '/xapi/v1/users/me'), 200);
    const selfDelete = await call('DELETE', `/xapi/v1/users/${me.id}`);
    expect(selfDelete.statusCode).toBe(409);
    expect(errorCode(selfDelete)).toBe('DELETE_BLOCKED');
    const selfLock = await call('PUT', `/xapi/v1/users/${me.id}`, { active: false });
    expect(selfLock.statusCode).toBe(409);
    expect(errorCode(selfLock)).toBe('SELF_LOCKOUT');
  });

  it('GET /users/me returns the caller with its permissions; API keys are refused there', async () => {
    const me = expectStatus<UserBody & { permissions: string[] }>(
      await call('GET', '/xapi/v1/users/me'),
      200,
    );
    expect(me.email).toBe('admin@stellwerk.test');
    expect(me.permissions).toEqual(['all.manage']);
    const key = expectStatus<{ key: string }>(
      await call('POST', '/xapi/v1/api-keys', { title: 'k', permissions: ['user.read'] }),
      201,
    );
    const viaKey = await caller(t, apiKey(key.key))('GET', '/xapi/v1/users/me');
    expect(viaKey.statusCode).toBe(403);
    expect(errorCode(viaKey)).toBe('USER_REQUIRED');
  });

  it('checks the route permissions: user.read lists, UserManagement.create creates, user.manage changes', async () => {
    const reader = await userWithPermissions(t, admin, 'Only Reader', ['user.read']);
    const r = caller(t, bearer(reader.token));
    expectStatus(await r('GET', '/xapi/v1/users'), 200);
    const create = await r('POST', '/xapi/v1/users', { email: 'x@stellwerk.test', suppressInvitation: true });
    expect(create.statusCode).toBe(403);
    expect(errorCode(create)).toBe('NO_PERMISSION_USERMANAGEMENT.CREATE');
    const update = await r('PUT', `/xapi/v1/users/${reader.id}`, { name: 'x' });
    expect(update.statusCode).toBe(403);
    expect(errorCode(update)).toBe('NO_PERMISSION_USER.MANAGE');

    const creator = await userWithPermissions(t, admin, 'Only Creator', ['UserManagement.create']);
    const made = await caller(t, bearer(creator.token))('POST', '/xapi/v1/users', {
      email: 'made-by-creator@stellwerk.test',
      suppressInvitation: true,
    });
    expectStatus(made, 201);
  });
});

describe('users: lists', () => {
  let account: string;
  beforeAll(async () => {
    account = await createAccount('List Plant');
    for (const [name, email] of [
      ['Carla', 'carla@list.test'],
      ['Anton', 'anton@list.test'],
      ['Bert', 'bert@LIST.test'],
    ]) {
      expectStatus(
        await call('POST', '/xapi/v1/users', { email, name, accountId: account, suppressInvitation: true }),
        201,
      );
    }
  });

  const names = async (query: string) =>
    expectStatus<ListBody<UserBody>>(
      await call('GET', `/xapi/v1/users?accountId=${account}&${query}`),
      200,
    ).data.map((u) => u.name);

  it('sorts by name with sort=name, sort=+name (raw and %2B) and sort=-name', async () => {
    expect(await names('sort=name')).toEqual(['Anton', 'Bert', 'Carla']);
    expect(await names('sort=+name')).toEqual(['Anton', 'Bert', 'Carla']);
    expect(await names('sort=%2Bname')).toEqual(['Anton', 'Bert', 'Carla']);
    expect(await names('sort=-name')).toEqual(['Carla', 'Bert', 'Anton']);
  });

  it('refuses an unknown sort field with 400 VALIDATION_ERROR', async () => {
    const response = await call('GET', `/xapi/v1/users?accountId=${account}&sort=passwordHash`);
    expect(response.statusCode).toBe(400);
    expect(errorCode(response)).toBe('VALIDATION_ERROR');
  });

  it('pages, and a page past the last one is 200 with empty data', async () => {
    const page2 = expectStatus<ListBody<UserBody>>(
      await call('GET', `/xapi/v1/users?accountId=${account}&sort=name&pageSize=2&page=2`),
      200,
    );
    expect(page2.data.map((u) => u.name)).toEqual(['Carla']);
    expect(page2.meta).toEqual({ page: 2, pageSize: 2, total: 3 });
    const past = expectStatus<ListBody<UserBody>>(
      await call('GET', `/xapi/v1/users?accountId=${account}&pageSize=2&page=9`),
      200,
    );
    expect(past).toEqual({ data: [], meta: { page: 9, pageSize: 2, total: 3 } });
  });

  it('searches name and e-mail case-insensitively, only in the acting account', async () => {
    expect(await names('searchItems=ANT')).toEqual(['Anton']);
    expect(await names('searchItems=list.TEST&sort=-name')).toEqual(['Carla', 'Bert', 'Anton']);
    const own = expectStatus<ListBody<UserBody>>(
      await call('GET', '/xapi/v1/users?searchItems=list.test'),
      200,
    );
    expect(own.data).toEqual([]);
  });

  it('answers 404 for an accountId outside the caller’s reach', async () => {
    const sibling = await createAccount('Sibling of List Plant');
    const local = await userWithPermissions(t, admin, 'List Local', ['user.read'], { accountId: account });
    const response = await caller(t, bearer(local.token))('GET', `/xapi/v1/users?accountId=${sibling}`);
    expect(response.statusCode).toBe(404);
    const parent = await caller(t, bearer(local.token))('GET', `/xapi/v1/users?accountId=${t.rootAccountId}`);
    expect(parent.statusCode).toBe(404);
  });
});

describe('users: single roles and privilege escalation', () => {
  it('adds one role without touching the user or its other roles, and removes it again', async () => {
    const u = expectStatus<UserBody>(
      await call('POST', '/xapi/v1/users', {
        email: 'roles@stellwerk.test',
        name: 'Role Holder',
        roleIds: [builtIn.AccountReader],
        suppressInvitation: true,
      }),
      201,
    );
    const added = expectStatus<UserBody>(
      await call('PUT', `/xapi/v1/users/${u.id}/roles/${builtIn['Digital Twin Manager']}`),
      200,
    );
    expect(added.roleIds.sort()).toEqual([builtIn.AccountReader, builtIn['Digital Twin Manager']].sort());
    expect(added).toMatchObject({ name: 'Role Holder', email: 'roles@stellwerk.test', active: true });
    // Adding twice is harmless; the user is still there with both roles.
    expectStatus(await call('PUT', `/xapi/v1/users/${u.id}/roles/${builtIn['Digital Twin Manager']}`), 200);
    const fetched = expectStatus<UserBody>(await call('GET', `/xapi/v1/users/${u.id}`), 200);
    expect(fetched.roleIds.sort()).toEqual(added.roleIds.sort());

    const removed = expectStatus<UserBody>(
      await call('DELETE', `/xapi/v1/users/${u.id}/roles/${builtIn.AccountReader}`),
      200,
    );
    expect(removed.roleIds).toEqual([builtIn['Digital Twin Manager']]);
    expectStatus(await call('GET', `/xapi/v1/users/${u.id}`), 200);

    const unknown = await call('PUT', `/xapi/v1/users/${u.id}/roles/0190a4a4-0000-7000-8000-000000000000`);
    expect(unknown.statusCode).toBe(404);
  });

  it('assigns roles of the account and its ancestors, never of a sibling', async () => {
    const a = await createAccount('Role Plant A');
    const b = await createAccount('Role Plant B');
    const rootRole = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/roles', { name: 'Root Custom', permissions: ['user.read'] }),
      201,
    );
    const bRole = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/roles', { name: 'B Custom', permissions: ['user.read'], accountId: b }),
      201,
    );
    const inA = expectStatus<UserBody>(
      await call('POST', '/xapi/v1/users', {
        email: 'in-a@stellwerk.test',
        accountId: a,
        roleIds: [rootRole.id],
        suppressInvitation: true,
      }),
      201,
    );
    expect(inA.roleIds).toEqual([rootRole.id]);
    const viaBody = await call('POST', '/xapi/v1/users', {
      email: 'in-a-2@stellwerk.test',
      accountId: a,
      roleIds: [bRole.id],
      suppressInvitation: true,
    });
    expect(viaBody.statusCode).toBe(400);
    expect(errorCode(viaBody)).toBe('VALIDATION_ERROR');
    expect((await call('PUT', `/xapi/v1/users/${inA.id}/roles/${bRole.id}`)).statusCode).toBe(404);
  });

  it('refuses to grant roles carrying permissions the caller lacks, and to change stronger users', async () => {
    const manager = await userWithPermissions(t, admin, 'Junior Manager', [
      'user.manage',
      'UserManagement.create',
      'role.read',
    ]);
    const m = caller(t, bearer(manager.token));
    const escalate = await m('POST', '/xapi/v1/users', {
      email: 'escalated@stellwerk.test',
      roleIds: [builtIn.Administrator],
      suppressInvitation: true,
    });
    expect(escalate.statusCode).toBe(403);
    expect(errorCode(escalate)).toBe('NO_PERMISSION_ALL.MANAGE');

    const plain = expectStatus<UserBody>(
      await m('POST', '/xapi/v1/users', { email: 'plain@stellwerk.test', suppressInvitation: true }),
      201,
    );
    const addAdmin = await m('PUT', `/xapi/v1/users/${plain.id}/roles/${builtIn.Administrator}`);
    expect(addAdmin.statusCode).toBe(403);
    expect(errorCode(addAdmin)).toBe('NO_PERMISSION_ALL.MANAGE');
    const selfAdmin = await m('PUT', `/xapi/v1/users/${manager.id}/roles/${builtIn.Administrator}`);
    expect(errorCode(selfAdmin)).toBe('NO_PERMISSION_ALL.MANAGE');
    // A role within the manager's own permissions is fine.
    expectStatus(await m('PUT', `/xapi/v1/users/${plain.id}/roles/${manager.roleId}`), 200);

    const me = expectStatus<UserBody>(await call('GET', '/xapi/v1/users/me'), 200);
    const touchAdmin = await m('PUT', `/xapi/v1/users/${me.id}`, { active: false });
    expect(touchAdmin.statusCode).toBe(403);
    expect(errorCode(touchAdmin)).toBe('NO_PERMISSION_ALL.MANAGE');
    expect(errorCode(await m('DELETE', `/xapi/v1/users/${me.id}`))).toBe('NO_PERMISSION_ALL.MANAGE');
  });

  it('never answers NO_PERMISSION_VIRTUALDEVICE.MANAGE to a holder of virtualDevice.manage', async () => {
    const holder = await userWithPermissions(t, admin, 'Device Keeper', [
      'virtualDevice.manage',
      'user.manage',
      'UserManagement.create',
      'role.manage',
    ]);
    const h = caller(t, bearer(holder.token));
    const role = await h('POST', '/xapi/v1/roles', {
      name: 'Device Hands',
      permissions: ['VirtualDevice.manage', 'VirtualDevice.read'],
    });
    const roleBody = expectStatus<{ id: string; permissions: string[] }>(role, 201);
    expect(roleBody.permissions).toEqual(['virtualDevice.manage', 'VirtualDevice.read']);
    const user = await h('POST', '/xapi/v1/users', {
      email: 'hands@stellwerk.test',
      roleIds: [roleBody.id],
      suppressInvitation: true,
    });
    expectStatus(user, 201);
    for (const response of [role, user])
      expect(response.body).not.toContain('NO_PERMISSION_VIRTUALDEVICE.MANAGE');
  });
});
