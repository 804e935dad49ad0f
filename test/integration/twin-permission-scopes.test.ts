import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { effectiveScopeSql } from '../../server/src/twins/twin-scopes.js';
import { bearer, caller, errorCode, expectStatus, login, userWithPermissions } from './support/identity.js';
import type { Credentials, ListBody } from './support/identity.js';
import { sql } from './support/ingest-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { probeScopedRoutes, queryInMemory } from './support/twin-scope-probe.js';

/**
 * Permission scopes of digital twins on real PostgreSQL: the effective scope (own, or inherited
 * while useParentScope holds) decides what a restricted user sees of twins, their states and
 * their time series, and it follows every change of flags, scopes and places.
 */

interface Twin {
  id: string;
  title: string;
  parentId: string | null;
  useParentScope: boolean;
  permissionScopeId: string | null;
  effectivePermissionScopeId: string | null;
  hierarchy: Array<{ id: string; title: string }>;
}

let t: TestApp;
let adminCredentials: Credentials;
let admin: ReturnType<typeof caller>;
let plant: string;
const scope = { north: '', south: '' };
const user: Record<'north' | 'south', Credentials> = {} as never;
const as: Record<'north' | 'south', ReturnType<typeof caller>> = {} as never;
/** The tree every test starts from (restored by `reset`). */
const tw: Record<'site' | 'hall' | 'pump' | 'annex' | 'valve' | 'yard', string> = {} as never;

const twinUrl = (id: string) => `/xapi/v1/digital-twins/${id}`;
const create = async (body: Record<string, unknown>, by = admin) =>
  expectStatus<Twin>(await by('POST', '/xapi/v1/digital-twins', { accountId: plant, ...body }), 201);
const put = async (id: string, body: Record<string, unknown>, by = admin) =>
  expectStatus<Twin>(await by('PUT', twinUrl(id), body), 200);
const titles = async (by: ReturnType<typeof caller>, query = '') => {
  const body = expectStatus<ListBody<Twin>>(
    await by('GET', `/xapi/v1/digital-twins?accountId=${plant}&sort=title&pageSize=100${query}`),
    200,
  );
  expect(body.meta.total).toBe(body.data.length);
  return body.data.map((d) => d.title);
};
const effective = async (id: string) =>
  (
    await sql<{ scope: string | null }>(
      t,
      'SELECT effective_permission_scope_id AS scope FROM digital_twins WHERE id = ?',
      [id],
    )
  )[0]!.scope;
/** Twins whose stored effective scope differs from the rule computed from scratch: always none. */
const drift = () =>
  sql<{ id: string }>(
    t,
    `SELECT t.id FROM digital_twins t WHERE t.effective_permission_scope_id IS DISTINCT FROM ${effectiveScopeSql('t')}`,
  );

/**
 * Site (north) ─ Hall ─ Pump          every level inherits: north
 *              └ Annex (own: south) ─ Valve   useParentScope false on Annex: south below it
 * Yard (no scope)                      seen by unrestricted principals only
 */
async function reset() {
  if (tw.site) {
    await put(tw.site, { permissionScopeId: scope.north, useParentScope: true });
    await put(tw.hall, { parentId: tw.site, useParentScope: true });
    await put(tw.pump, { parentId: tw.hall, useParentScope: true, permissionScopeId: null });
    await put(tw.annex, { parentId: tw.site, useParentScope: false, permissionScopeId: scope.south });
    await put(tw.valve, { parentId: tw.annex, useParentScope: true });
    return;
  }
  tw.site = (await create({ title: 'Site', permissionScopeId: scope.north })).id;
  tw.hall = (await create({ title: 'Hall', parentId: tw.site })).id;
  tw.pump = (await create({ title: 'Pump', parentId: tw.hall })).id;
  tw.annex = (
    await create({ title: 'Annex', parentId: tw.site, useParentScope: false, permissionScopeId: scope.south })
  ).id;
  tw.valve = (await create({ title: 'Valve', parentId: tw.annex })).id;
  tw.yard = (await create({ title: 'Yard' })).id;
}

beforeAll(async () => {
  t = await createTestApp();
  adminCredentials = bearer(await login(t));
  admin = caller(t, adminCredentials);
  plant = expectStatus<{ id: string }>(await admin('POST', '/xapi/v1/accounts', { title: 'Works' }), 201).id;
  for (const name of ['north', 'south'] as const) {
    scope[name] = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/permission-scopes', { title: `${name} area`, accountId: plant }),
      201,
    ).id;
    const restriction = { accountId: plant, permissionScopeIds: [scope[name]] };
    const operator = await userWithPermissions(
      t,
      adminCredentials,
      `${name} op`,
      ['digitalTwin.manage'],
      restriction,
    );
    user[name] = bearer(operator.token);
    as[name] = caller(t, user[name]);
  }
  await reset();
}, 120_000);
afterAll(() => t?.close());

describe('twin permission scopes', () => {
  it('inherits the scope through three levels and overrides it with useParentScope false', async () => {
    const pump = expectStatus<Twin>(await admin('GET', twinUrl(tw.pump)), 200);
    expect(pump).toMatchObject({
      useParentScope: true,
      permissionScopeId: null,
      effectivePermissionScopeId: scope.north,
    });
    const annex = expectStatus<Twin>(await admin('GET', twinUrl(tw.annex)), 200);
    expect(annex).toMatchObject({
      useParentScope: false,
      permissionScopeId: scope.south,
      effectivePermissionScopeId: scope.south,
    });
    expect(await effective(tw.valve)).toBe(scope.south);
    expect(await effective(tw.yard)).toBeNull();

    expect(await titles(as.north)).toEqual(['Hall', 'Pump', 'Site']);
    expect(await titles(as.south)).toEqual(['Annex', 'Valve']);
    expect(await titles(admin)).toEqual(['Annex', 'Hall', 'Pump', 'Site', 'Valve', 'Yard']);
    expect(await titles(as.north, `&parentId=${tw.site}`)).toEqual(['Hall']);

    for (const id of [tw.annex, tw.valve, tw.yard]) {
      for (const [method, body] of [['GET'], ['PUT', { title: 'Taken' }], ['DELETE']] as const) {
        const response = await as.north(method, twinUrl(id), body);
        expect(response.statusCode, `${method} ${id}`).toBe(404);
        expect(errorCode(response)).toBe('NOT_FOUND');
      }
    }
    // The way down shows only what the caller sees; parentId stays so a read-back PUT keeps the place.
    expect(
      expectStatus<Twin>(await as.north('GET', twinUrl(tw.pump)), 200).hierarchy.map((h) => h.title),
    ).toEqual(['Site', 'Hall', 'Pump']);
    const valve = expectStatus<Twin>(await as.south('GET', twinUrl(tw.valve)), 200);
    expect(valve.hierarchy.map((h) => h.title)).toEqual(['Annex', 'Valve']);
    const annexSeen = expectStatus<Twin & Record<string, unknown>>(
      await as.south('GET', twinUrl(tw.annex)),
      200,
    );
    expect(annexSeen.parentId).toBe(tw.site);
    expectStatus(await as.south('PUT', twinUrl(tw.annex), annexSeen), 200);

    const stats = (by: ReturnType<typeof caller>) =>
      by('GET', `/xapi/v1/digital-twins/statistics?accountId=${plant}&sampleSize=50`).then((r) =>
        expectStatus<{ twins: number; sample: Array<{ id: string }> }>(r, 200),
      );
    const north = await stats(as.north);
    expect(north.twins).toBe(3);
    expect(north.sample.map((s) => s.id).sort()).toEqual([tw.site, tw.hall, tw.pump].sort());
    expect((await stats(admin)).twins).toBe(6);
    expect(await drift()).toEqual([]);
  });

  it('re-scopes the subtree when a flag or an own scope changes', async () => {
    await put(tw.annex, { useParentScope: true });
    expect(await titles(as.north)).toEqual(['Annex', 'Hall', 'Pump', 'Site', 'Valve']);
    expect(await titles(as.south)).toEqual([]);
    await put(tw.site, { permissionScopeId: scope.south });
    expect(await titles(as.north)).toEqual([]);
    expect(await titles(as.south)).toEqual(['Annex', 'Hall', 'Pump', 'Site', 'Valve']);
    // The own scope of an inheriting twin waits until the flag is turned off.
    await put(tw.hall, { permissionScopeId: scope.north });
    expect(await effective(tw.pump)).toBe(scope.south);
    await put(tw.hall, { useParentScope: false });
    expect(await titles(as.north)).toEqual(['Hall', 'Pump']);
    expect(await drift()).toEqual([]);
    await put(tw.hall, { permissionScopeId: null, useParentScope: true });
    await reset();
    expect(await titles(as.north)).toEqual(['Hall', 'Pump', 'Site']);
    expect(await drift()).toEqual([]);
  });

  it('changes what a restricted user sees when a twin moves', async () => {
    await put(tw.hall, { parentId: tw.annex });
    expect(await titles(as.north)).toEqual(['Site']);
    expect(await titles(as.south)).toEqual(['Annex', 'Hall', 'Pump', 'Valve']);
    expect((await as.north('GET', twinUrl(tw.pump))).statusCode).toBe(404);
    expect(
      expectStatus<Twin>(await as.south('GET', twinUrl(tw.pump)), 200).hierarchy.map((h) => h.title),
    ).toEqual(['Annex', 'Hall', 'Pump']);
    // To the root: an inheriting twin without an own scope is seen by unrestricted principals only.
    await put(tw.pump, { parentId: null });
    expect(await effective(tw.pump)).toBeNull();
    expect(await titles(as.south)).toEqual(['Annex', 'Hall', 'Valve']);
    expect(await drift()).toEqual([]);
    await reset();
    expect(await titles(as.north)).toEqual(['Hall', 'Pump', 'Site']);
  });

  it('keeps a restricted user inside its scopes when it creates, moves or re-scopes twins', async () => {
    const own = await create({ title: 'North shed' }, as.north);
    expect(own).toMatchObject({ permissionScopeId: scope.north, effectivePermissionScopeId: scope.north });
    const child = await create({ title: 'Shed door', parentId: own.id }, as.north);
    expect(child).toMatchObject({ permissionScopeId: null, effectivePermissionScopeId: scope.north });

    const hidden = await as.north('PUT', twinUrl(tw.hall), { parentId: tw.annex });
    const missing = await as.north('PUT', twinUrl(tw.hall), {
      parentId: '0192d7a4-0000-7000-8000-00000000dead',
    });
    expect([hidden.statusCode, errorCode(hidden)]).toEqual([422, 'CONFIG_NOT_ASSIGNED']);
    expect(hidden.json<{ error: { message: string } }>().error.message).toBe(
      missing
        .json<{ error: { message: string } }>()
        .error.message.replace('0192d7a4-0000-7000-8000-00000000dead', tw.annex),
    );
    const belowHidden = await as.north('POST', '/xapi/v1/digital-twins', { title: 'x', parentId: tw.valve });
    expect([belowHidden.statusCode, errorCode(belowHidden)]).toEqual([422, 'CONFIG_NOT_ASSIGNED']);
    const foreignScope = await as.north('PUT', twinUrl(own.id), { permissionScopeId: scope.south });
    expect([foreignScope.statusCode, errorCode(foreignScope)]).toEqual([422, 'CONFIG_NOT_ASSIGNED']);
    for (const body of [{ parentId: null }, { useParentScope: false }, { permissionScopeId: null }]) {
      const target = 'permissionScopeId' in body ? own.id : tw.pump;
      const refused = await as.north('PUT', twinUrl(target), body);
      expect([refused.statusCode, errorCode(refused)], JSON.stringify(body)).toEqual([
        403,
        'PERMISSION_SCOPE_RESTRICTED',
      ]);
    }
    // Refusals roll back: the pump is still below the hall, in the north.
    expect(expectStatus<Twin>(await as.north('GET', twinUrl(tw.pump)), 200).parentId).toBe(tw.hall);

    // Deleting a parent: its inheriting children become root twins and keep the scope they had.
    expectStatus(await as.north('DELETE', twinUrl(own.id)), 204);
    expect(expectStatus<Twin>(await as.north('GET', twinUrl(child.id)), 200)).toMatchObject({
      parentId: null,
      permissionScopeId: scope.north,
      effectivePermissionScopeId: scope.north,
    });
    expectStatus(await as.north('DELETE', twinUrl(child.id)), 204);
    expect(await drift()).toEqual([]);
  });

  it('filters data states and their sources by the twin’s effective scope', async () => {
    const addState = async (twinId: string, body: Record<string, unknown>, by = admin, status = 201) =>
      expectStatus<{ id: string }>(await by('POST', `${twinUrl(twinId)}/states`, body), status);
    const pumpFlow = await addState(tw.pump, { key: 'flow', value: 4 });
    const valveFlow = await addState(tw.valve, { key: 'flow', value: 7 });
    const stateUrl = (id: string) => `/xapi/v1/states/${id}`;

    expectStatus(await as.north('GET', stateUrl(pumpFlow.id)), 200);
    for (const [method, url, body] of [
      ['GET', stateUrl(valveFlow.id)],
      ['PUT', stateUrl(valveFlow.id), { value: 8 }],
      ['DELETE', stateUrl(valveFlow.id)],
      ['GET', `${twinUrl(tw.valve)}/states`],
      ['POST', `${twinUrl(tw.valve)}/states`, { key: 'sneaky' }],
    ] as const) {
      const response = await as.north(method, url, body);
      expect([response.statusCode, errorCode(response)], `${method} ${url}`).toEqual([404, 'NOT_FOUND']);
    }
    const keys = expectStatus<ListBody<{ key: string }>>(
      await as.north('GET', `${twinUrl(tw.pump)}/states`),
      200,
    );
    expect(keys.data.map((s) => s.key)).toEqual(['flow']);

    // An aggregate may read only states the caller sees: a hidden one is "not found".
    const reading = (stateIds: string[]) => ({
      key: `sum-${stateIds.length}`,
      source: { type: 'aggregate', operation: 'sum', stateIds },
    });
    const leak = await as.north('POST', `${twinUrl(tw.pump)}/states`, reading([pumpFlow.id, valveFlow.id]));
    expect([leak.statusCode, errorCode(leak)]).toEqual([400, 'VALIDATION_ERROR']);
    expect(leak.body).toContain(valveFlow.id);
    await addState(tw.pump, reading([pumpFlow.id]), as.north);

    const stats = expectStatus<{ states: number }>(
      await as.north('GET', `/xapi/v1/digital-twins/statistics?accountId=${plant}`),
      200,
    );
    expect(stats.states).toBe(2);
  });

  it('reads only the time series of visible twins, in SQL and in the in-memory evaluator', async () => {
    const stateOf = async (twinId: string, key: string) =>
      (
        await sql<{ id: string }>(t, 'SELECT id FROM data_states WHERE twin_id = ? AND key = ?', [
          twinId,
          key,
        ])
      )[0]!.id;
    const pumpFlow = await stateOf(tw.pump, 'flow');
    const valveFlow = await stateOf(tw.valve, 'flow');
    await sql(
      t,
      `INSERT INTO ts_points (state_id, time, value)
       SELECT s.id, timestamptz '2026-02-01' + g * interval '1 minute', s.v FROM generate_series(0, 9) g,
              (VALUES (?::uuid, 1.0), (?::uuid, 2.0)) AS s(id, v)`,
      [pumpFlow, valveFlow],
    );
    // Written past the write path, so no hour is marked late: hours from these points on are read from
    // the points again, as a tool that writes ts_points itself must do (timeseries/rollups.ts refoldFrom).
    await sql(t, "UPDATE ts_rollup_fold SET folded_before = least(folded_before, timestamptz '2026-02-01')");
    const text =
      "SELECT twin.hierarchy AS h, count(*) AS n, sum(value) AS total WHERE time >= '2026-02-01' AND time < '2026-02-02' GROUP BY h ORDER BY h";
    const rowsOf = async (by: ReturnType<typeof caller>) =>
      expectStatus<{ rows: unknown[][] }>(
        await by('POST', '/xapi/v1/timeseries/query', { query: text, accountId: plant }),
        200,
      ).rows;
    expect(await rowsOf(admin)).toEqual([
      ['Site / Annex / Valve', 10, 20],
      ['Site / Hall / Pump', 10, 10],
    ]);
    expect(await rowsOf(as.north)).toEqual([['Site / Hall / Pump', 10, 10]]);
    // Hidden ancestors are left out of the hierarchy as they are out of twin replies.
    expect(await rowsOf(as.south)).toEqual([['Annex / Valve', 10, 20]]);
    const byId = await as.north('POST', '/xapi/v1/timeseries/query', {
      query: `SELECT count(*) WHERE state.id = '${valveFlow}' OR twin UNDER '${tw.annex}'`,
      accountId: plant,
    });
    expect(expectStatus<{ rows: unknown[][] }>(byId, 200).rows).toEqual([[0]]);

    // The evaluator path: states are resolved in PostgreSQL with the same scope condition.
    const north = await queryInMemory(t, { accountId: plant, permissionScopeIds: [scope.north] }, text);
    expect(north.meta.target).toBe('influx-stand-in');
    expect(north.rows).toEqual([['Site / Hall / Pump', 10, 10]]);
    const everyone = await queryInMemory(t, { accountId: plant, permissionScopeIds: null }, text);
    expect(everyone.rows).toHaveLength(2);
  });

  it('keeps every stored scope equal to the rule through a random mix of moves and changes', async () => {
    const nodes: string[] = [];
    for (let i = 0; i < 8; i++) {
      const parent = i ? { parentId: nodes[(i - 1) >> 1] } : {};
      const own = i % 3 === 0 ? { useParentScope: false } : {};
      nodes.push(
        (
          await create({
            title: `Node ${i}`,
            permissionScopeId: i % 2 ? scope.north : scope.south,
            ...parent,
            ...own,
          })
        ).id,
      );
    }
    let seed = 7;
    const pick = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const change = (): Record<string, unknown> => {
      switch (pick(3)) {
        case 0:
          return { parentId: pick(4) ? nodes[pick(8)] : null };
        case 1:
          return { useParentScope: pick(2) === 0 };
        default:
          return { permissionScopeId: [scope.north, scope.south, null][pick(3)] };
      }
    };
    const replies = await Promise.all(
      Array.from({ length: 40 }, () => admin('PUT', twinUrl(nodes[pick(8)]!), change())),
    );
    const statuses = replies.map((r) => r.statusCode);
    // 422: a move below the twin itself or one of its descendants (TWIN_HIERARCHY_CYCLE).
    expect(statuses.filter((s) => s !== 200 && s !== 422)).toEqual([]);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(20);
    expect(await drift()).toEqual([]);
    for (const id of nodes) expectStatus(await admin('DELETE', twinUrl(id)), 204);
    expect(await drift()).toEqual([]);
  });

  it('answers 404 on every twin and state route for a hidden twin, and lists never name one', async () => {
    const violations = await probeScopedRoutes(t, {
      accountId: plant,
      caller: user.north,
      visibleParentId: tw.site,
      hiddenParentId: tw.annex,
    });
    expect(violations).toEqual([]);
  }, 300_000);

  it('refuses to delete a scope twins carry, and deletes an account with scoped twins', async () => {
    const blocked = await admin('DELETE', `/xapi/v1/permission-scopes/${scope.north}`);
    expect([blocked.statusCode, errorCode(blocked)]).toEqual([409, 'DELETE_BLOCKED']);
    const other = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/accounts', { title: 'Gone' }),
      201,
    ).id;
    const area = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/permission-scopes', { title: 'gone area', accountId: other }),
      201,
    ).id;
    const root = (await create({ title: 'Gone site', accountId: other, permissionScopeId: area })).id;
    await create({ title: 'Gone hall', accountId: other, parentId: root });
    const unused = await admin('DELETE', `/xapi/v1/permission-scopes/${area}`);
    expect(unused.statusCode).toBe(409);
    expectStatus(await admin('DELETE', `/xapi/v1/accounts/${other}`), 204);
    expect(await sql(t, 'SELECT id FROM digital_twins WHERE account_id = ?', [other])).toEqual([]);
  });
});
