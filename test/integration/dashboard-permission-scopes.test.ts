import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, expectStatus, login, userWithPermissions } from './support/identity.js';
import type { Credentials, ListBody } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Dashboards under permission scopes on real PostgreSQL: a restricted reader gets layouts without
 * the twins and states it does not see, and saving such a layout back keeps them for the others.
 */

interface Widget {
  id: string;
  twinId?: string;
  stateIds?: string[];
}
interface Dashboard {
  id: string;
  layout: { version: number; widgets: Widget[] };
}

let t: TestApp;
let admin: ReturnType<typeof caller>;
let north: ReturnType<typeof caller>;
let plant: string;
const ids = { pump: '', pumpState: '', boiler: '', boilerState: '' };

const widget = (id: string, twinId: string, stateIds: string[], x = 0) => ({
  id,
  type: 'line-chart',
  title: '',
  x,
  y: 0,
  w: 3,
  h: 4,
  twinId,
  stateIds,
});

beforeAll(async () => {
  t = await createTestApp();
  const adminCredentials: Credentials = bearer(await login(t));
  admin = caller(t, adminCredentials);
  plant = expectStatus<{ id: string }>(await admin('POST', '/xapi/v1/accounts', { title: 'Works' }), 201).id;
  const scopes: string[] = [];
  for (const title of ['north', 'south'])
    scopes.push(
      expectStatus<{ id: string }>(
        await admin('POST', '/xapi/v1/permission-scopes', { title, accountId: plant }),
        201,
      ).id,
    );
  for (const [name, scope] of [
    ['pump', scopes[0]],
    ['boiler', scopes[1]],
  ] as const) {
    ids[name] = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/digital-twins', {
        title: name,
        accountId: plant,
        permissionScopeId: scope,
      }),
      201,
    ).id;
    ids[`${name}State`] = expectStatus<{ id: string }>(
      await admin('POST', `/xapi/v1/digital-twins/${ids[name]}/states`, { key: 'temp', valueType: 'number' }),
      201,
    ).id;
  }
  const manager = await userWithPermissions(t, adminCredentials, 'north dashboards', ['dashboard.manage'], {
    accountId: plant,
    permissionScopeIds: [scopes[0]!],
  });
  north = caller(t, bearer(manager.token));
}, 120_000);
afterAll(() => t?.close());

describe('dashboards under permission scopes', () => {
  it('show a restricted reader only twins and states it sees, and keep the others when it saves', async () => {
    const layout = {
      version: 1,
      widgets: [
        widget('both', ids.pump, [ids.pumpState, ids.boilerState]),
        widget('south', ids.boiler, [ids.boilerState], 3),
      ],
    };
    const created = expectStatus<Dashboard>(
      await admin('POST', '/xapi/v1/dashboards', { title: 'Plant', accountId: plant, layout }),
      201,
    );
    const seen = expectStatus<Dashboard>(await north('GET', `/xapi/v1/dashboards/${created.id}`), 200);
    expect(seen.layout.widgets.map((w) => [w.id, w.twinId, w.stateIds])).toEqual([
      ['both', ids.pump, [ids.pumpState]],
      ['south', undefined, []],
    ]);
    const listed = expectStatus<ListBody<Dashboard>>(
      await north('GET', `/xapi/v1/dashboards?accountId=${plant}`),
      200,
    );
    for (const hidden of [ids.boiler, ids.boilerState]) {
      expect(JSON.stringify(listed)).not.toContain(hidden);
      expect(JSON.stringify(seen)).not.toContain(hidden);
    }

    // The north manager moves a widget and saves what it read: the south references stay.
    const moved = {
      ...seen.layout,
      widgets: seen.layout.widgets.map((w) => (w.id === 'south' ? { ...w, y: 4 } : w)),
    };
    const saved = expectStatus<Dashboard>(
      await north('PUT', `/xapi/v1/dashboards/${created.id}`, { layout: moved }),
      200,
    );
    expect(JSON.stringify(saved)).not.toContain(ids.boiler);
    const stored = expectStatus<Dashboard>(await admin('GET', `/xapi/v1/dashboards/${created.id}`), 200);
    expect(stored.layout.widgets.map((w) => [w.id, w.twinId, w.stateIds])).toEqual([
      ['both', ids.pump, [ids.pumpState, ids.boilerState]],
      ['south', ids.boiler, [ids.boilerState]],
    ]);
  });
});
