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

interface RoleBody {
  id: string;
  accountId: string | null;
  name: string;
  description: string;
  permissions: string[];
  builtIn: boolean;
}

let t: TestApp;
let admin: Credentials;
let call: ReturnType<typeof caller>;
let plantA: string;
let plantB: string;

beforeAll(async () => {
  t = await createTestApp();
  admin = bearer(await login(t));
  call = caller(t, admin);
  const account = async (title: string) =>
    expectStatus<{ id: string }>(await call('POST', '/xapi/v1/accounts', { title }), 201).id;
  plantA = await account('Plant A');
  plantB = await account('Plant B');
});
afterAll(() => t.close());

const names = async (credentials: Credentials, query = '') =>
  expectStatus<ListBody<RoleBody>>(
    await caller(t, credentials)('GET', `/xapi/v1/roles?pageSize=500&${query}`),
    200,
  ).data.map((r) => r.name);

describe('permission catalogue', () => {
  it('lists every permission the spec names, in canonical spelling', async () => {
    const body = expectStatus<{ data: string[] }>(await call('GET', '/xapi/v1/permissions'), 200);
    for (const name of [
      'all.manage',
      'all.read',
      'virtualDevice.manage',
      'VirtualDevice.read',
      'Integration.manage',
      'IotHub.manage',
      'IotHub.read',
      'UserManagement.create',
      'deviceTemplate.read',
    ]) {
      expect(body.data).toContain(name);
    }
  });
});

describe('roles', () => {
  it('offers the built-in roles to every account', async () => {
    const builtIns = expectStatus<ListBody<RoleBody>>(await call('GET', '/xapi/v1/roles'), 200).data.filter(
      (r) => r.builtIn,
    );
    expect(builtIns.map((r) => r.name).sort()).toEqual([
      'AccountReader',
      'Administrator',
      'Digital Twin Manager',
      'User Manager',
    ]);
    expect(builtIns.every((r) => r.accountId === null)).toBe(true);
    expect(await names(admin, `accountId=${plantA}`)).toEqual(
      expect.arrayContaining(['AccountReader', 'Digital Twin Manager']),
    );
  });

  it('creates a custom role with canonical permission names and refuses unknown ones', async () => {
    const created = expectStatus<RoleBody>(
      await call('POST', '/xapi/v1/roles', {
        name: 'Field Service',
        description: 'Service technicians',
        permissions: ['VIRTUALDEVICE.MANAGE', 'iothub.read', 'deviceTemplate.read', 'iothub.READ'],
        accountId: plantA,
      }),
      201,
    );
    expect(created).toMatchObject({
      name: 'Field Service',
      accountId: plantA,
      builtIn: false,
      permissions: ['virtualDevice.manage', 'IotHub.read', 'deviceTemplate.read'],
    });
    expectStatus(await call('GET', `/xapi/v1/roles/${created.id}`), 200);

    const unknown = await call('POST', '/xapi/v1/roles', {
      name: 'Bad',
      permissions: ['user.read', 'device.teleport'],
    });
    expect(unknown.statusCode).toBe(400);
    const body = JSON.parse(unknown.body) as {
      error: { code: string; message: string; details: Array<{ permission: string }> };
    };
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.message).toContain('device.teleport');
    expect(body.error.details[0]?.permission).toBe('device.teleport');
  });

  it('refuses duplicate names in one account and the names of built-in roles', async () => {
    expectStatus(await call('POST', '/xapi/v1/roles', { name: 'Auditor', permissions: ['all.read'] }), 201);
    const dup = await call('POST', '/xapi/v1/roles', { name: 'Auditor', permissions: [] });
    expect(dup.statusCode).toBe(409);
    expect(errorCode(dup)).toBe('ROLE_NAME_TAKEN');
    expect(errorCode(await call('POST', '/xapi/v1/roles', { name: 'administrator', permissions: [] }))).toBe(
      'ROLE_NAME_TAKEN',
    );
    // Another account may use the same name.
    expectStatus(
      await call('POST', '/xapi/v1/roles', { name: 'Auditor', permissions: ['all.read'], accountId: plantB }),
      201,
    );
  });

  it('never changes or deletes built-in roles', async () => {
    const reader = expectStatus<ListBody<RoleBody>>(
      await call('GET', '/xapi/v1/roles?searchItems=accountreader'),
      200,
    ).data[0]!;
    expect(reader.name).toBe('AccountReader');
    const put = await call('PUT', `/xapi/v1/roles/${reader.id}`, { permissions: ['all.manage'] });
    expect(put.statusCode).toBe(403);
    expect(errorCode(put)).toBe('BUILT_IN_ROLE');
    const del = await call('DELETE', `/xapi/v1/roles/${reader.id}`);
    expect(del.statusCode).toBe(403);
    expect(errorCode(del)).toBe('BUILT_IN_ROLE');
    const after = expectStatus<RoleBody>(await call('GET', `/xapi/v1/roles/${reader.id}`), 200);
    expect(after.permissions).toEqual(['all.read']);
  });

  it('updates a role, and refuses to delete it while a user holds it', async () => {
    const role = expectStatus<RoleBody>(
      await call('POST', '/xapi/v1/roles', { name: 'Temp', permissions: ['user.read'] }),
      201,
    );
    const updated = expectStatus<RoleBody>(
      await call('PUT', `/xapi/v1/roles/${role.id}`, {
        name: 'Temporary',
        permissions: ['user.read', 'role.read'],
      }),
      200,
    );
    expect(updated).toMatchObject({ name: 'Temporary', permissions: ['user.read', 'role.read'] });
    const user = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/users', {
        email: 'temp@stellwerk.test',
        roleIds: [role.id],
        suppressInvitation: true,
      }),
      201,
    );
    const blocked = await call('DELETE', `/xapi/v1/roles/${role.id}`);
    expect(blocked.statusCode).toBe(409);
    const body = JSON.parse(blocked.body) as {
      error: { code: string; details: Array<{ type: string; id: string }> };
    };
    expect(body.error.code).toBe('DELETE_BLOCKED');
    expect(body.error.details).toEqual([expect.objectContaining({ type: 'user', id: user.id })]);

    expectStatus(await call('DELETE', `/xapi/v1/users/${user.id}/roles/${role.id}`), 200);
    expect((await call('DELETE', `/xapi/v1/roles/${role.id}`)).statusCode).toBe(204);
    expect((await call('GET', `/xapi/v1/roles/${role.id}`)).statusCode).toBe(404);
  });

  it('shows a sub-account the roles of its ancestors (read-only), never those of siblings', async () => {
    const rootRole = expectStatus<RoleBody>(
      await call('POST', '/xapi/v1/roles', { name: 'Root Wide', permissions: ['role.read'] }),
      201,
    );
    const siblingRole = expectStatus<RoleBody>(
      await call('POST', '/xapi/v1/roles', { name: 'B Only', permissions: ['role.read'], accountId: plantB }),
      201,
    );
    const local = await userWithPermissions(t, admin, 'A Role Admin', ['role.manage'], { accountId: plantA });
    const a = caller(t, bearer(local.token));
    const visible = await names(bearer(local.token));
    expect(visible).toEqual(expect.arrayContaining(['Root Wide', 'Field Service', 'AccountReader']));
    expect(visible).not.toContain('B Only');
    expect(await names(admin)).not.toContain('Field Service');

    expectStatus(await a('GET', `/xapi/v1/roles/${rootRole.id}`), 200);
    const change = await a('PUT', `/xapi/v1/roles/${rootRole.id}`, { name: 'Hijacked' });
    expect(change.statusCode).toBe(403);
    expect(errorCode(change)).toBe('INHERITED_ROLE');
    expect(errorCode(await a('DELETE', `/xapi/v1/roles/${rootRole.id}`))).toBe('INHERITED_ROLE');
    expect((await a('GET', `/xapi/v1/roles/${siblingRole.id}`)).statusCode).toBe(404);
    expect((await a('PUT', `/xapi/v1/roles/${siblingRole.id}`, { name: 'x' })).statusCode).toBe(404);
    expect((await a('GET', `/xapi/v1/roles?accountId=${plantB}`)).statusCode).toBe(404);
  });

  it('refuses roles with permissions the caller lacks, but never those it holds', async () => {
    const holder = await userWithPermissions(t, admin, 'Device Role Maker', [
      'virtualDevice.manage',
      'role.manage',
    ]);
    const h = caller(t, bearer(holder.token));
    const escalate = await h('POST', '/xapi/v1/roles', {
      name: 'Too Much',
      permissions: ['virtualDevice.manage', 'account.manage'],
    });
    expect(escalate.statusCode).toBe(403);
    expect(errorCode(escalate)).toBe('NO_PERMISSION_ACCOUNT.MANAGE');

    const fine = await h('POST', '/xapi/v1/roles', {
      name: 'Devices',
      permissions: ['virtualDevice.manage', 'VirtualDevice.read'],
    });
    const role = expectStatus<RoleBody>(fine, 201);
    const grown = await h('PUT', `/xapi/v1/roles/${role.id}`, { permissions: ['all.manage'] });
    expect(errorCode(grown)).toBe('NO_PERMISSION_ALL.MANAGE');
    // Editing the holder's own role to grant itself more is the same escalation.
    expect(
      errorCode(await h('PUT', `/xapi/v1/roles/${holder.roleId}`, { permissions: ['all.manage'] })),
    ).toBe('NO_PERMISSION_ALL.MANAGE');
    const renamed = await h('PUT', `/xapi/v1/roles/${role.id}`, { name: 'Device Crew' });
    expectStatus(renamed, 200);
    for (const response of [fine, renamed])
      expect(response.body).not.toContain('NO_PERMISSION_VIRTUALDEVICE.MANAGE');
  });

  it('needs role.read to read and role.manage to change', async () => {
    const reader = await userWithPermissions(t, admin, 'Role Reader', ['role.read']);
    const r = caller(t, bearer(reader.token));
    expectStatus(await r('GET', '/xapi/v1/roles'), 200);
    const create = await r('POST', '/xapi/v1/roles', { name: 'Nope', permissions: [] });
    expect(create.statusCode).toBe(403);
    expect(errorCode(create)).toBe('NO_PERMISSION_ROLE.MANAGE');
    const nobody = await userWithPermissions(t, admin, 'No Roles Reader', ['user.read']);
    expect(errorCode(await caller(t, bearer(nobody.token))('GET', '/xapi/v1/roles'))).toBe(
      'NO_PERMISSION_ROLE.READ',
    );
  });

  it('sorts and pages role lists', async () => {
    for (const name of ['Zeta Sort 2', 'Zeta Sort 3', 'Zeta Sort 1']) {
      expectStatus(await call('POST', '/xapi/v1/roles', { name, permissions: [] }), 201);
    }
    const ordered = ['Zeta Sort 1', 'Zeta Sort 2', 'Zeta Sort 3'];
    expect(await names(admin, 'searchItems=zeta%20SORT&sort=name')).toEqual(ordered);
    expect(await names(admin, 'searchItems=zeta%20SORT&sort=+name')).toEqual(ordered);
    expect(await names(admin, 'searchItems=zeta%20SORT&sort=%2Bname')).toEqual(ordered);
    expect(await names(admin, 'searchItems=zeta%20SORT&sort=-name')).toEqual([...ordered].reverse());
    const all = await names(admin, 'sort=name');
    expect(await names(admin, 'sort=-name')).toEqual([...all].reverse());
    const past = expectStatus<ListBody<RoleBody>>(
      await call('GET', '/xapi/v1/roles?page=50&pageSize=10'),
      200,
    );
    expect(past.data).toEqual([]);
    expect(past.meta).toEqual({ page: 50, pageSize: 10, total: all.length });
    expect(errorCode(await call('GET', '/xapi/v1/roles?sort=permissions'))).toBe('VALIDATION_ERROR');
  });
});
