import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from './support/ingest-fixtures.js';
import { caller, errorCode, expectStatus, login, type ListBody } from './support/identity.js';
import { buildTenancyWorld, type TenancyWorld } from './support/tenancy-world.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/** The reply fields the tests read; the rest is checked with toMatchObject. */
type Twin = Record<string, unknown> & {
  id: string;
  accountId: string;
  status: string;
  hierarchy: Array<{ id: string; title: string }>;
  states: Array<{ key: string; value: unknown; warning: string | null }>;
  dashboardId: string | null;
  useParentScope: boolean;
};

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
  expectStatus<Twin>(await call('POST', '/xapi/v1/digital-twins', body), 201);
const update = async (id: string, body: Record<string, unknown>, status = 200) =>
  expectStatus<Twin>(await call('PUT', `/xapi/v1/digital-twins/${id}`, body), status);
const list = async (query: string, accountId: string) =>
  expectStatus<ListBody<Twin>>(
    await call('GET', `/xapi/v1/digital-twins?accountId=${accountId}&${query}`),
    200,
  );
const storedPath = async (id: string) =>
  (await sql<{ path: string[] }>(t, 'SELECT path FROM digital_twins WHERE id = ?', [id]))[0]?.path;

async function insertState(twin: Twin, key: string, source: unknown, warning: string | null = null) {
  await sql(
    t,
    `INSERT INTO data_states (id, account_id, twin_id, key, title, value_type, source, meta, value, timestamp,
                              warning, engine, created_at, updated_at)
     VALUES (gen_random_uuid(), ?, ?, ?, ?, 'number', ?::jsonb, '{}', '21.5', now(), ?, '{}', now(), now())`,
    [twin.accountId, twin.id, key, key, JSON.stringify(source), warning],
  );
}

describe('digital twins', () => {
  it('creates with the spec defaults: referenceId optional, useParentScope true, status in the reply', async () => {
    const twin = await create({ title: 'Site Nord', accountId: world.accounts.own });
    expect(twin).toMatchObject({
      accountId: world.accounts.own,
      parentId: null,
      referenceId: null,
      useParentScope: true,
      status: 'active',
      customProperties: {},
      tags: [],
      dashboardId: null,
      states: [],
      hierarchy: [{ id: twin.id, title: 'Site Nord' }],
    });
    const explicit = await create({
      title: 'Own scope',
      useParentScope: false,
      accountId: world.accounts.own,
    });
    expect(explicit.useParentScope).toBe(false);
    expect(await storedPath(twin.id)).toEqual([twin.id]);
  });

  it('builds the hierarchy below a parent of the same account only', async () => {
    const site = await create({ title: 'Site', accountId: world.accounts.own });
    const hall = await create({ title: 'Hall', parentId: site.id, accountId: world.accounts.own });
    const pump = await create({ title: 'Pump', parentId: hall.id, accountId: world.accounts.own });
    expect(pump.hierarchy).toEqual([
      { id: site.id, title: 'Site' },
      { id: hall.id, title: 'Hall' },
      { id: pump.id, title: 'Pump' },
    ]);
    expect(await storedPath(pump.id)).toEqual([site.id, hall.id, pump.id]);
    const elsewhere = await create({ title: 'Child site', accountId: world.accounts.child });
    for (const parentId of [elsewhere.id, '0190a6c2-0000-7000-8000-000000000000']) {
      const r = await call('POST', '/xapi/v1/digital-twins', {
        title: 'Wrong parent',
        parentId,
        accountId: world.accounts.own,
      });
      expect(r.statusCode).toBe(422);
      expect(errorCode(r)).toBe('CONFIG_NOT_ASSIGNED');
    }
  });

  it('accepts a dashboard of the same account only, naming the field otherwise', async () => {
    const dashboard = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/dashboards', { title: 'Board', accountId: world.accounts.own }),
      201,
    );
    const foreign = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/dashboards', { title: 'Board', accountId: world.accounts.child }),
      201,
    );
    const twin = await create({
      title: 'With board',
      dashboardId: dashboard.id,
      accountId: world.accounts.own,
    });
    expect(twin.dashboardId).toBe(dashboard.id);
    const r = await call('PUT', `/xapi/v1/digital-twins/${twin.id}`, { dashboardId: foreign.id });
    expect(r.statusCode).toBe(422);
    expect(r.json<{ error: { code: string; message: string; details: unknown[] } }>().error).toMatchObject({
      code: 'CONFIG_NOT_ASSIGNED',
      message: expect.stringContaining('dashboardId') as string,
      details: [{ path: '/dashboardId' }],
    });
    expect((await update(twin.id, { dashboardId: null })).dashboardId).toBeNull();
  });

  it('moves a twin with its subtree, refuses cycles and keeps paths right', async () => {
    const a = await create({ title: 'A', accountId: world.accounts.own });
    const b = await create({ title: 'B', parentId: a.id, accountId: world.accounts.own });
    const c = await create({ title: 'C', parentId: b.id, accountId: world.accounts.own });
    const d = await create({ title: 'D', accountId: world.accounts.own });

    for (const [id, parentId] of [
      [a.id, c.id],
      [b.id, b.id],
      [a.id, b.id],
    ] as const) {
      const r = await call('PUT', `/xapi/v1/digital-twins/${id}`, { parentId });
      expect(r.statusCode, r.body).toBe(422);
      expect(errorCode(r)).toBe('TWIN_HIERARCHY_CYCLE');
    }
    expect(await storedPath(c.id)).toEqual([a.id, b.id, c.id]);

    const moved = await update(b.id, { parentId: d.id, description: 'moved with its subtree' });
    expect(moved.hierarchy.map((h) => h.title)).toEqual(['D', 'B']);
    const bNow = expectStatus<Twin & { description: string }>(
      await call('GET', `/xapi/v1/digital-twins/${b.id}`),
      200,
    );
    expect(bNow).toMatchObject({ parentId: d.id, description: 'moved with its subtree' });
    expect(await storedPath(b.id)).toEqual([d.id, b.id]);
    expect(await storedPath(c.id)).toEqual([d.id, b.id, c.id]);
    expect(await storedPath(a.id)).toEqual([a.id]);
    const cNow = expectStatus<Twin>(await call('GET', `/xapi/v1/digital-twins/${c.id}`), 200);
    expect(cNow.hierarchy.map((h) => h.title)).toEqual(['D', 'B', 'C']);

    await update(b.id, { parentId: null });
    expect(await storedPath(c.id)).toEqual([b.id, c.id]);
    // Now that A is no longer above B, A may go below C.
    await update(a.id, { parentId: c.id });
    expect(await storedPath(a.id)).toEqual([b.id, c.id, a.id]);
  });

  it('serialises concurrent opposite moves: one wins, the other is a cycle', async () => {
    const x = await create({ title: 'X', accountId: world.accounts.own });
    const y = await create({ title: 'Y', accountId: world.accounts.own });
    const [first, second] = await Promise.all([
      call('PUT', `/xapi/v1/digital-twins/${x.id}`, { parentId: y.id }),
      call('PUT', `/xapi/v1/digital-twins/${y.id}`, { parentId: x.id }),
    ]);
    expect([first.statusCode, second.statusCode].sort()).toEqual([200, 422]);
    const paths = [await storedPath(x.id), await storedPath(y.id)];
    expect(paths).toEqual(first.statusCode === 200 ? [[y.id, x.id], [y.id]] : [[x.id], [x.id, y.id]]);
  });

  it('a partial PUT changes only the fields sent and never touches states or their sources', async () => {
    const twin = await create({
      title: 'Routed',
      referenceId: 'REF-1',
      customProperties: { floor: '2', owner: 'ops' },
      tags: ['map'],
      address: { street: 'Hauptstr. 1', city: 'Bern' },
      latitude: 46.95,
      longitude: 7.44,
      accountId: world.accounts.own,
    });
    await insertState(twin, 'temperature', { type: 'dynamic-routing', stateKey: 'temp' });
    await insertState(twin, 'flow', { type: 'dynamic-routing', stateKey: 'flow' });
    const changed = await update(twin.id, { title: 'Routed (renamed)', status: 'inactive' });
    expect(changed).toMatchObject({
      title: 'Routed (renamed)',
      status: 'inactive',
      referenceId: 'REF-1',
      customProperties: { floor: '2', owner: 'ops' },
      tags: ['map'],
      address: { street: 'Hauptstr. 1', city: 'Bern' },
      latitude: 46.95,
      longitude: 7.44,
      useParentScope: true,
    });
    expect(changed.states.map((s) => s.key)).toEqual(['flow', 'temperature']);
    // A twin sent back as it was read (hierarchy, states, ids) is accepted and changes nothing else.
    expectStatus(await call('PUT', `/xapi/v1/digital-twins/${twin.id}`, { ...changed, states: [] }), 200);
    const sources = await sql<{ key: string; source: unknown }>(
      t,
      'SELECT key, source FROM data_states WHERE twin_id = ? ORDER BY key',
      [twin.id],
    );
    expect(sources).toEqual([
      { key: 'flow', source: { type: 'dynamic-routing', stateKey: 'flow' } },
      { key: 'temperature', source: { type: 'dynamic-routing', stateKey: 'temp' } },
    ]);
  });

  it('deletes the address through the API, and the twin with its states; children become roots', async () => {
    const parent = await create({
      title: 'Doomed',
      address: { street: 'Weg 3', city: 'Chur' },
      latitude: 46.85,
      longitude: 9.53,
      accountId: world.accounts.own,
    });
    const child = await create({ title: 'Orphan', parentId: parent.id, accountId: world.accounts.own });
    const noAddress = expectStatus<Twin>(
      await call('DELETE', `/xapi/v1/digital-twins/${parent.id}/address`),
      200,
    );
    expect(noAddress).toMatchObject({ address: null, latitude: null, longitude: null, title: 'Doomed' });
    await insertState(parent, 'level', null);
    expectStatus(await call('DELETE', `/xapi/v1/digital-twins/${parent.id}`), 204);
    expect((await call('GET', `/xapi/v1/digital-twins/${parent.id}`)).statusCode).toBe(404);
    expect(await sql(t, 'SELECT 1 FROM data_states WHERE twin_id = ?', [parent.id])).toEqual([]);
    const orphan = expectStatus<Twin>(await call('GET', `/xapi/v1/digital-twins/${child.id}`), 200);
    expect(orphan).toMatchObject({ parentId: null, hierarchy: [{ id: child.id, title: 'Orphan' }] });
    expect(await storedPath(child.id)).toEqual([child.id]);
  });

  it('lists twins only, with searchItems, filters (with NOT), parent, referenceId, sort and paging', async () => {
    // A fresh account, so twins of other tests do not show up.
    const account = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/accounts', { title: 'Lists', parentId: t.rootAccountId }),
      201,
    ).id;
    const root = await create({ title: 'Campus', accountId: account });
    await create({
      title: 'Boiler house',
      tags: ['heat'],
      customProperties: { floor: '1' },
      parentId: root.id,
      accountId: account,
    });
    await create({
      title: 'boiler room',
      tags: ['heat', 'old'],
      customProperties: { floor: '2' },
      referenceId: 'R-7',
      accountId: account,
    });
    await create({ title: 'Chiller', tags: ['cold'], customProperties: { floor: '2' }, accountId: account });
    const device = await call('POST', '/xapi/v1/virtual-devices', {
      device_id: 'boiler',
      title: 'Boiler device',
      accountId: account,
    });
    expectStatus(device, 201);

    const titles = (body: ListBody<Twin>) => body.data.map((d) => d.title);
    expect(titles(await list('searchItems=BOILER', account))).toEqual(['Boiler house', 'boiler room']);
    expect(titles(await list('filter[tag]=heat&filter[tag][not]=old', account))).toEqual(['Boiler house']);
    expect(titles(await list('filter[kv.floor]=2&sort=-title', account))).toEqual(['Chiller', 'boiler room']);
    expect(titles(await list('filter[kv.floor][not]=2', account))).toEqual(['Boiler house', 'Campus']);
    expect(titles(await list('filter[title]=room', account))).toEqual(['boiler room']);
    expect(titles(await list(`parentId=${root.id}`, account))).toEqual(['Boiler house']);
    expect(titles(await list('referenceId=R-7', account))).toEqual(['boiler room']);
    expect(titles(await list('sort=-createdAt', account))).toEqual([
      'Chiller',
      'boiler room',
      'Boiler house',
      'Campus',
    ]);
    const page2 = await list('sort=title&pageSize=3&page=2', account);
    expect(page2).toMatchObject({ meta: { page: 2, pageSize: 3, total: 4 } });
    expect(titles(page2)).toEqual(['Chiller']);
    const past = await list('pageSize=3&page=9', account);
    expect(past).toEqual({ data: [], meta: { page: 9, pageSize: 3, total: 4 } });
    expect(errorCode(await call('GET', `/xapi/v1/digital-twins?filter[colour]=red`))).toBe(
      'VALIDATION_ERROR',
    );
    expect(errorCode(await call('GET', `/xapi/v1/digital-twins?sort=device_id`))).toBe('VALIDATION_ERROR');
  });

  it('filters the list by status, alone or with tags, and refuses an unknown status', async () => {
    const accountId = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/accounts', { title: 'Statuses', parentId: t.rootAccountId }),
      201,
    ).id;
    await create({ title: 'Pump on', tags: ['pump'], accountId });
    await create({ title: 'Pump off', tags: ['pump'], status: 'inactive', accountId });
    await create({ title: 'Valve off', tags: ['valve'], status: 'inactive', accountId });
    const titles = async (query: string) => (await list(query, accountId)).data.map((d) => d.title);
    expect(await titles('filter[status]=inactive')).toEqual(['Pump off', 'Valve off']);
    expect(await titles('filter[status]=active')).toEqual(['Pump on']);
    expect(await titles('filter[status]=inactive&filter[tag]=pump')).toEqual(['Pump off']);
    expect(await titles('filter[status]=active&filter[status]=inactive&filter[tag]=pump')).toEqual([
      'Pump off',
      'Pump on',
    ]);
    expect((await list('filter[status]=inactive&pageSize=1', accountId)).meta.total).toBe(2);
    for (const bad of ['filter[status]=broken', 'filter[status][not]=active', 'filter[status]=']) {
      const r = await call('GET', `/xapi/v1/digital-twins?accountId=${accountId}&${bad}`);
      expect(errorCode(r), bad).toBe('VALIDATION_ERROR');
    }
  });

  it('hides twins of other tenants (404) from reads, changes and lists', async () => {
    const foreign = expectStatus<Twin>(
      await caller(t, { authorization: `Bearer ${world.rootToken}` })('POST', '/xapi/v1/digital-twins', {
        title: 'Sibling twin',
        accountId: world.accounts.sibling,
      }),
      201,
    );
    const own = caller(t, { authorization: world.credentials.bearer.authorization! });
    for (const [method, url] of [
      ['GET', `/xapi/v1/digital-twins/${foreign.id}`],
      ['PUT', `/xapi/v1/digital-twins/${foreign.id}`],
      ['DELETE', `/xapi/v1/digital-twins/${foreign.id}/address`],
      ['DELETE', `/xapi/v1/digital-twins/${foreign.id}`],
      ['GET', `/xapi/v1/digital-twins?accountId=${world.accounts.sibling}`],
      ['GET', `/xapi/v1/digital-twins?accountId=${world.accounts.sibling}&filter[status]=active`],
      ['GET', `/xapi/v1/digital-twins/statistics?accountId=${world.accounts.sibling}`],
    ] as const) {
      const r = await own(method, url, method === 'PUT' ? { title: 'taken over' } : undefined);
      expect(r.statusCode, `${method} ${url}`).toBe(404);
    }
    const mine = expectStatus<ListBody<Twin>>(await own('GET', '/xapi/v1/digital-twins?pageSize=500'), 200);
    expect(mine.data.every((d) => d.accountId === world.accounts.own)).toBe(true);
  });

  it('answers statistics with counts and a bounded sample of the most recently changed twins', async () => {
    const accountId = world.accounts.parent;
    const first = await create({ title: 'S1', latitude: 1, longitude: 2, accountId });
    await create({ title: 'S2', status: 'inactive', accountId });
    await create({ title: 'S3', accountId });
    await insertState(first, 'a', null, 'value does not fit number');
    await insertState(first, 'b', null);
    await update(first.id, { description: 'touched last' });
    const stats = expectStatus<Record<string, unknown> & { sample: Array<Record<string, unknown>> }>(
      await call('GET', `/xapi/v1/digital-twins/statistics?accountId=${accountId}&sampleSize=2`),
      200,
    );
    expect(stats).toMatchObject({
      accountId,
      twins: 3,
      twinsByStatus: { active: 2, inactive: 1 },
      twinsWithLocation: 1,
      states: 2,
      statesWithWarnings: 1,
      sampleSize: 2,
    });
    expect(stats.sample.map((s) => s.title)).toEqual(['S1', 'S3']);
    expect(stats.sample[0]).toMatchObject({ id: first.id, stateCount: 2, warningCount: 1 });
    const withSubs = expectStatus<{ twins: number }>(
      await call('GET', `/xapi/v1/digital-twins/statistics?accountId=${accountId}&includeSubAccounts=true`),
      200,
    );
    expect(withSubs.twins).toBeGreaterThan(3);
    for (const bad of ['sampleSize=101', 'sampleSize=-1', 'sampleSize=x']) {
      const r = await call('GET', `/xapi/v1/digital-twins/statistics?${bad}`);
      expect(r.statusCode, bad).toBe(400);
    }
  });

  it('refuses ?geocode=true without a configured geocoder', async () => {
    const r = await call('POST', '/xapi/v1/digital-twins?geocode=true', {
      title: 'Geo',
      address: { city: 'Bern' },
    });
    expect(r.statusCode).toBe(422);
    expect(errorCode(r)).toBe('GEOCODER_NOT_CONFIGURED');
  });
});
