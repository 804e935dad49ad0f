import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
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

interface ScopeBody {
  id: string;
  accountId: string;
  title: string;
  description: string;
}

let t: TestApp;
let admin: Credentials;
let call: ReturnType<typeof caller>;
let plant: string;
const scope: Record<'north' | 'south' | 'east', string> = { north: '', south: '', east: '' };

beforeAll(async () => {
  t = await createTestApp();
  admin = bearer(await login(t));
  call = caller(t, admin);
  plant = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/accounts', { title: 'Scoped Plant' }),
    201,
  ).id;
  for (const [key, title] of [
    ['north', 'North hall'],
    ['south', 'South hall'],
    ['east', 'East yard'],
  ] as const) {
    scope[key] = expectStatus<ScopeBody>(
      await call('POST', '/xapi/v1/permission-scopes', {
        title,
        description: `${title} devices`,
        accountId: plant,
      }),
      201,
    ).id;
  }
});
afterAll(() => t.close());

const titles = async (credentials: Credentials, query: string) =>
  expectStatus<ListBody<ScopeBody>>(
    await caller(t, credentials)('GET', `/xapi/v1/permission-scopes?${query}`),
    200,
  ).data.map((s) => s.title);

describe('permission scopes', () => {
  it('creates, reads, updates and lists scopes of an account', async () => {
    const one = expectStatus<ScopeBody>(await call('GET', `/xapi/v1/permission-scopes/${scope.east}`), 200);
    expect(one).toMatchObject({ accountId: plant, title: 'East yard', description: 'East yard devices' });
    expect(await titles(admin, `accountId=${plant}&sort=title`)).toEqual([
      'East yard',
      'North hall',
      'South hall',
    ]);
    expect(await titles(admin, `accountId=${plant}&sort=+title`)).toEqual([
      'East yard',
      'North hall',
      'South hall',
    ]);
    expect(await titles(admin, `accountId=${plant}&sort=-title`)).toEqual([
      'South hall',
      'North hall',
      'East yard',
    ]);
    expect(await titles(admin, `accountId=${plant}&searchItems=HALL&sort=title`)).toEqual([
      'North hall',
      'South hall',
    ]);
    expect(await titles(admin, `accountId=${plant}&page=4&pageSize=1`)).toEqual([]);
    expect(await titles(admin, '')).toEqual([]);

    const renamed = expectStatus<ScopeBody>(
      await call('PUT', `/xapi/v1/permission-scopes/${scope.east}`, { title: 'East hall' }),
      200,
    );
    expect(renamed.title).toBe('East hall');
    const clash = await call('PUT', `/xapi/v1/permission-scopes/${scope.east}`, { title: 'North hall' });
    expect(clash.statusCode).toBe(409);
    expect(errorCode(clash)).toBe('PERMISSION_SCOPE_TITLE_TAKEN');
  });

  it('restricts a user to its scopes: only those in lists, 404 on the others', async () => {
    const restricted = await userWithPermissions(
      t,
      admin,
      'North Keeper',
      ['permissionScope.manage', 'user.read'],
      {
        accountId: plant,
        permissionScopeIds: [scope.north],
      },
    );
    const me = expectStatus<{ permissionScopeIds: string[] }>(
      await call('GET', `/xapi/v1/users/${restricted.id}`),
      200,
    );
    expect(me.permissionScopeIds).toEqual([scope.north]);

    const r = caller(t, bearer(restricted.token));
    expect(await titles(bearer(restricted.token), '')).toEqual(['North hall']);
    const total = expectStatus<ListBody<ScopeBody>>(await r('GET', '/xapi/v1/permission-scopes'), 200).meta
      .total;
    expect(total).toBe(1);
    expectStatus(await r('GET', `/xapi/v1/permission-scopes/${scope.north}`), 200);
    expectStatus(
      await r('PUT', `/xapi/v1/permission-scopes/${scope.north}`, { description: 'the north' }),
      200,
    );
    for (const [method, body] of [['GET'], ['PUT', { title: 'Mine now' }], ['DELETE']] as const) {
      const response = await r(method, `/xapi/v1/permission-scopes/${scope.south}`, body);
      expect(response.statusCode, method).toBe(404);
      expect(errorCode(response)).toBe('NOT_FOUND');
    }
    const create = await r('POST', '/xapi/v1/permission-scopes', { title: 'Secret hall' });
    expect(create.statusCode).toBe(403);
    expect(errorCode(create)).toBe('PERMISSION_SCOPE_RESTRICTED');

    // Widening the user lifts the restriction.
    expectStatus(
      await call('PUT', `/xapi/v1/users/${restricted.id}`, {
        permissionScopeIds: [scope.north, scope.south],
      }),
      200,
    );
    expect(await titles(bearer(restricted.token), 'sort=title')).toEqual(['North hall', 'South hall']);
    expectStatus(await call('PUT', `/xapi/v1/users/${restricted.id}`, { permissionScopeIds: [] }), 200);
    expect(await titles(bearer(restricted.token), 'sort=title')).toEqual([
      'East hall',
      'North hall',
      'South hall',
    ]);
  });

  it('keeps a restricted user from widening anyone’s reach', async () => {
    const manager = await userWithPermissions(
      t,
      admin,
      'South Manager',
      ['user.manage', 'UserManagement.create', 'permissionScope.read', 'apiKey.manage'],
      { accountId: plant, permissionScopeIds: [scope.south] },
    );
    const m = caller(t, bearer(manager.token));
    const unrestricted = await m('POST', '/xapi/v1/users', {
      email: 'free@stellwerk.test',
      suppressInvitation: true,
    });
    expect(unrestricted.statusCode).toBe(403);
    expect(errorCode(unrestricted)).toBe('PERMISSION_SCOPE_RESTRICTED');
    const foreign = await m('POST', '/xapi/v1/users', {
      email: 'north@stellwerk.test',
      permissionScopeIds: [scope.north],
      suppressInvitation: true,
    });
    expect(foreign.statusCode).toBe(400);
    const inside = expectStatus<{ id: string }>(
      await m('POST', '/xapi/v1/users', {
        email: 'south@stellwerk.test',
        permissionScopeIds: [scope.south],
        suppressInvitation: true,
      }),
      201,
    );
    expect(errorCode(await m('PUT', `/xapi/v1/users/${inside.id}`, { permissionScopeIds: [] }))).toBe(
      'PERMISSION_SCOPE_RESTRICTED',
    );
    const key = await m('POST', '/xapi/v1/api-keys', { title: 'sees everything', permissions: [] });
    expect(key.statusCode).toBe(403);
    expect(errorCode(key)).toBe('PERMISSION_SCOPE_RESTRICTED');
  });

  it('assigns only scopes of the user’s account (or below) and refuses deletion of scopes in use', async () => {
    const other = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/accounts', { title: 'Other Plant' }),
      201,
    ).id;
    const otherScope = expectStatus<ScopeBody>(
      await call('POST', '/xapi/v1/permission-scopes', { title: 'Other hall', accountId: other }),
      201,
    );
    const user = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/users', {
        email: 'plant-user@stellwerk.test',
        accountId: plant,
        suppressInvitation: true,
      }),
      201,
    );
    const wrong = await call('PUT', `/xapi/v1/users/${user.id}`, { permissionScopeIds: [otherScope.id] });
    expect(wrong.statusCode).toBe(400);
    expect(errorCode(wrong)).toBe('VALIDATION_ERROR');
    // A user of the parent account may be restricted to an area of a sub-account.
    const rootUser = expectStatus<{ permissionScopeIds: string[] }>(
      await call('POST', '/xapi/v1/users', {
        email: 'root-area@stellwerk.test',
        permissionScopeIds: [otherScope.id],
        suppressInvitation: true,
      }),
      201,
    );
    expect(rootUser.permissionScopeIds).toEqual([otherScope.id]);

    const blocked = await call('DELETE', `/xapi/v1/permission-scopes/${otherScope.id}`);
    expect(blocked.statusCode).toBe(409);
    expect(errorCode(blocked)).toBe('DELETE_BLOCKED');
    const unused = expectStatus<ScopeBody>(
      await call('POST', '/xapi/v1/permission-scopes', { title: 'Unused', accountId: other }),
      201,
    );
    expect((await call('DELETE', `/xapi/v1/permission-scopes/${unused.id}`)).statusCode).toBe(204);
    expect((await call('GET', `/xapi/v1/permission-scopes/${unused.id}`)).statusCode).toBe(404);
  });

  it('needs permissionScope.read / permissionScope.manage', async () => {
    const reader = await userWithPermissions(t, admin, 'Scope Reader', ['permissionScope.read']);
    const r = caller(t, bearer(reader.token));
    expectStatus(await r('GET', '/xapi/v1/permission-scopes'), 200);
    expect(errorCode(await r('POST', '/xapi/v1/permission-scopes', { title: 'x' }))).toBe(
      'NO_PERMISSION_PERMISSIONSCOPE.MANAGE',
    );
    const none = await userWithPermissions(t, admin, 'Scope Stranger', ['user.read']);
    expect(errorCode(await caller(t, bearer(none.token))('GET', '/xapi/v1/permission-scopes'))).toBe(
      'NO_PERMISSION_PERMISSIONSCOPE.READ',
    );
  });
});
