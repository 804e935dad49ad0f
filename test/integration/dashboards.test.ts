import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearer,
  caller,
  errorCode,
  expectStatus,
  login,
  userWithPermissions,
  type ListBody,
} from './support/identity.js';
import { buildTenancyWorld, type TenancyWorld } from './support/tenancy-world.js';
import { createTestApp, type TestApp } from './support/test-app.js';

interface Dashboard {
  id: string;
  accountId: string;
  title: string;
  description: string;
  layout: Record<string, unknown>;
}

let t: TestApp;
let world: TenancyWorld;
let call: ReturnType<typeof caller>;

beforeAll(async () => {
  t = await createTestApp();
  world = await buildTenancyWorld(t);
  call = caller(t, { authorization: `Bearer ${await login(t)}` });
}, 120_000);
afterAll(() => t?.close());

const create = async (body: Record<string, unknown>) =>
  expectStatus<Dashboard>(await call('POST', '/xapi/v1/dashboards', body), 201);

describe('dashboards', () => {
  it('creates, reads, changes partially and deletes; a twin showing it keeps no dashboard', async () => {
    const layout = { columns: 12, widgets: [{ type: 'gauge', x: 0, y: 0, stateId: null }] };
    const board = await create({
      title: 'Plant',
      description: 'Overview',
      layout,
      accountId: world.accounts.own,
    });
    expect(board).toMatchObject({
      accountId: world.accounts.own,
      title: 'Plant',
      description: 'Overview',
      layout,
    });
    const changed = expectStatus<Dashboard>(
      await call('PUT', `/xapi/v1/dashboards/${board.id}`, { title: 'Plant A' }),
      200,
    );
    expect(changed).toMatchObject({ title: 'Plant A', description: 'Overview', layout });
    expect(expectStatus<Dashboard>(await call('GET', `/xapi/v1/dashboards/${board.id}`), 200).title).toBe(
      'Plant A',
    );
    const blank = await call('PUT', `/xapi/v1/dashboards/${board.id}`, { title: '   ' });
    expect(blank.statusCode).toBe(400);

    const twin = expectStatus<{ id: string; dashboardId: string | null }>(
      await call('POST', '/xapi/v1/digital-twins', {
        title: 'Shows it',
        dashboardId: board.id,
        accountId: world.accounts.own,
      }),
      201,
    );
    expect(twin.dashboardId).toBe(board.id);
    expectStatus(await call('DELETE', `/xapi/v1/dashboards/${board.id}`), 204);
    expect((await call('GET', `/xapi/v1/dashboards/${board.id}`)).statusCode).toBe(404);
    const after = expectStatus<{ dashboardId: string | null }>(
      await call('GET', `/xapi/v1/digital-twins/${twin.id}`),
      200,
    );
    expect(after.dashboardId).toBeNull();
  });

  it('lists with searchItems, sort and paging (past the end: 200, empty)', async () => {
    const accountId = world.accounts.child;
    for (const title of ['beta', 'Alpha', 'Gamma', 'alpha two']) await create({ title, accountId });
    const titles = async (query: string) =>
      expectStatus<ListBody<Dashboard>>(
        await call('GET', `/xapi/v1/dashboards?accountId=${accountId}&${query}`),
        200,
      );
    expect((await titles('searchItems=ALPHA')).data.map((d) => d.title).sort()).toEqual([
      'Alpha',
      'alpha two',
    ]);
    expect((await titles('sort=-createdAt')).data.map((d) => d.title)).toEqual([
      'alpha two',
      'Gamma',
      'Alpha',
      'beta',
    ]);
    const page = await titles('sort=createdAt&pageSize=3&page=2');
    expect(page).toMatchObject({ data: [{ title: 'alpha two' }], meta: { page: 2, pageSize: 3, total: 4 } });
    expect(await titles('pageSize=3&page=5')).toEqual({ data: [], meta: { page: 5, pageSize: 3, total: 4 } });
    expect(errorCode(await call('GET', '/xapi/v1/dashboards?sort=layout'))).toBe('VALIDATION_ERROR');
  });

  it("checks the console's version-1 widget grid; nested dashboards must be of the same account", async () => {
    const accountId = world.accounts.own;
    const sameAccount = await create({ title: 'Pumps', accountId });
    const otherAccount = await create({ title: 'Child board', accountId: world.accounts.child });
    const twinId = '0190a2b0-0000-7000-8000-000000000001';
    const stateId = '0190a2b0-0000-7000-8000-000000000002';
    const gauge = { id: 'g1', type: 'gauge', title: '', x: 0, y: 0, w: 3, h: 4, twinId, stateIds: [stateId] };
    const nested = { id: 'n1', type: 'dashboard', title: 'Pumps', x: 3, y: 0, w: 3, h: 2 };
    const layout = {
      version: 1,
      widgets: [
        gauge,
        { ...nested, dashboardId: sameAccount.id },
        { ...gauge, id: 'g2', min: 0, max: null, x: 6 },
        // One state's current value as a big number.
        { ...gauge, id: 'v1', type: 'value', x: 9, h: 3 },
      ],
    };
    const board = await create({ title: 'Plant grid', accountId, layout });
    expect(board.layout).toEqual(layout);

    const put = (body: Record<string, unknown>) => call('PUT', `/xapi/v1/dashboards/${board.id}`, body);
    const refusedAt = async (widgets: unknown, path: string, status = 400) => {
      const reply = await put({ layout: { version: 1, widgets } });
      expect(reply.statusCode, path).toBe(status);
      const body = reply.json<{ error: { code: string; message: string; details: { path: string }[] } }>();
      expect(body.error.details[0]?.path, body.error.message).toBe(path);
      return body.error;
    };
    await refusedAt('none', '/layout/widgets');
    await refusedAt([{ ...gauge, x: 10, w: 3 }], '/layout/widgets/0/w');
    await refusedAt([{ ...gauge, h: 0 }], '/layout/widgets/0/h');
    await refusedAt([gauge, gauge], '/layout/widgets/1/id');
    const unknownType = await refusedAt([{ ...gauge, type: 'spreadsheet' }], '/layout/widgets/0/type');
    expect(unknownType.message).toContain('line-chart, value, gauge');
    await refusedAt([{ ...gauge, stateIds: ['state-1'] }], '/layout/widgets/0/stateIds/0');
    await refusedAt([{ ...gauge, min: 10, max: 5 }], '/layout/widgets/0/min');
    await refusedAt([{ ...gauge, range: '2y' }], '/layout/widgets/0/range');
    await refusedAt(
      Array.from({ length: 101 }, (_, i) => ({ ...gauge, id: `w${i}` })),
      '/layout/widgets',
    );
    const foreign = await refusedAt(
      [gauge, { ...nested, dashboardId: otherAccount.id }],
      '/layout/widgets/1/dashboardId',
      422,
    );
    expect(foreign.code).toBe('CONFIG_NOT_ASSIGNED');
    // Nothing was changed by the refused writes.
    expect(expectStatus<Dashboard>(await call('GET', `/xapi/v1/dashboards/${board.id}`), 200).layout).toEqual(
      layout,
    );
    // Layouts without `version: 1` are the client's own business, as before.
    const free = { columns: 12, widgets: 'anything', version: 'draft' };
    expect(expectStatus<Dashboard>(await put({ layout: free }), 200).layout).toEqual(free);
  });

  it('keeps dashboards of other tenants out of reach and needs dashboard permissions', async () => {
    const foreign = expectStatus<Dashboard>(
      await caller(t, bearer(world.rootToken))('POST', '/xapi/v1/dashboards', {
        title: 'Sibling board',
        accountId: world.accounts.sibling,
      }),
      201,
    );
    const own = caller(t, { authorization: world.credentials.bearer.authorization! });
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const r = await own(
        method,
        `/xapi/v1/dashboards/${foreign.id}`,
        method === 'PUT' ? { title: 'x' } : undefined,
      );
      expect(r.statusCode, method).toBe(404);
    }
    expect((await own('GET', `/xapi/v1/dashboards?accountId=${world.accounts.sibling}`)).statusCode).toBe(
      404,
    );

    const reader = await userWithPermissions(t, bearer(world.rootToken), 'Board reader', ['dashboard.read']);
    const readOnly = caller(t, bearer(reader.token));
    expectStatus(await readOnly('GET', '/xapi/v1/dashboards'), 200);
    const refused = await readOnly('POST', '/xapi/v1/dashboards', { title: 'Nope' });
    expect(refused.statusCode).toBe(403);
    expect(errorCode(refused)).toBe('NO_PERMISSION_DASHBOARD.MANAGE');
  });
});
