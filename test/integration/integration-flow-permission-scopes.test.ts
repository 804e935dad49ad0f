import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, expectStatus, login, userWithPermissions } from './support/identity.js';
import type { Credentials, ListBody } from './support/identity.js';
import { insertConnector, insertDevice, insertDriver, packet, sql } from './support/ingest-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';

/**
 * Integration flows under permission scopes, with packets through the real ingest pipeline and
 * entries of the real alarm log: a flow takes only items of the scopes recorded from whoever saved
 * it last, and a restricted reader sees only flows within its own scopes.
 */

interface Run {
  input: Record<string, unknown>;
}

let t: TestApp;
let admin: ReturnType<typeof caller>;
let north: ReturnType<typeof caller>;
let plant: string;
let connector: string;
const scope = { north: '', south: '' };
const device = { north: '', south: '' };
const twin = { north: '', south: '' };

const flow = async (by: ReturnType<typeof caller>, source: { type: string; deviceIds?: string[] }) =>
  expectStatus<{ id: string; permissionScopeIds: string[] | null }>(
    await by('POST', '/xapi/v1/integration-flows', {
      title: `flow ${source.type}`,
      source,
      accountId: plant,
    }),
    201,
  );

/** The inputs of a flow's runs once at least `count` are recorded. */
async function inputs(flowId: string, count: number): Promise<Array<Record<string, unknown>>> {
  return waitFor(
    async () => {
      await t.services.flowRunner.flushRuns();
      const runs = expectStatus<{ data: Run[] }>(
        await admin('GET', `/xapi/v1/integration-flows/${flowId}/runs`),
        200,
      ).data;
      return runs.length >= count ? runs.map((r) => r.input) : undefined;
    },
    15_000,
    { what: `${count} runs of flow ${flowId}` },
  );
}

beforeAll(async () => {
  t = await createTestApp();
  const adminCredentials: Credentials = bearer(await login(t));
  admin = caller(t, adminCredentials);
  plant = expectStatus<{ id: string }>(await admin('POST', '/xapi/v1/accounts', { title: 'Works' }), 201).id;
  for (const name of ['north', 'south'] as const) {
    scope[name] = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/permission-scopes', { title: name, accountId: plant }),
      201,
    ).id;
    twin[name] = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/digital-twins', {
        title: `${name} twin`,
        accountId: plant,
        permissionScopeId: scope[name],
      }),
      201,
    ).id;
  }
  connector = await insertConnector(t, plant, 'webhook-in');
  const driverId = await insertDriver(t, { type: 'json' }, plant);
  for (const name of ['north', 'south'] as const) {
    device[name] = await insertDevice(t, {
      connectorId: connector,
      deviceKey: `${name}-meter`,
      driverId,
      accountId: plant,
    });
    await sql(t, 'UPDATE virtual_devices SET permission_scope_id = ? WHERE id = ?', [
      scope[name],
      device[name],
    ]);
  }
  const integrator = await userWithPermissions(
    t,
    adminCredentials,
    'north integrator',
    ['Integration.manage'],
    {
      accountId: plant,
      permissionScopeIds: [scope.north],
    },
  );
  north = caller(t, bearer(integrator.token));
}, 120_000);
afterAll(() => t?.close());

describe('integration flows under permission scopes', () => {
  it('take only packets and alarm entries of the scopes recorded from the saver', async () => {
    const northPackets = await flow(north, { type: 'packets' });
    expect(northPackets.permissionScopeIds).toEqual([scope.north]);
    const northAlarms = await flow(north, { type: 'alarms' });
    const allPackets = await flow(admin, { type: 'packets' });
    const allAlarms = await flow(admin, { type: 'alarms' });
    expect(allPackets.permissionScopeIds).toBeNull();

    await t.services.packets.append(packet(connector, 'south-meter', { reading: 2 }));
    await t.services.packets.append(packet(connector, 'north-meter', { reading: 1 }));
    for (const name of ['south', 'north'] as const)
      await t.services.alarmLogs.write({
        accountId: plant,
        category: 'Rule',
        message: `${name} hot`,
        reference: { type: 'digitalTwin', id: twin[name] },
      });

    expect((await inputs(allPackets.id, 2)).map((i) => i.deviceId).sort()).toEqual(
      [device.north, device.south].sort(),
    );
    expect((await inputs(allAlarms.id, 2)).map((i) => i.message).sort()).toEqual(['north hot', 'south hot']);
    expect((await inputs(northPackets.id, 1)).map((i) => i.deviceId)).toEqual([device.north]);
    expect((await inputs(northAlarms.id, 1)).map((i) => i.message)).toEqual(['north hot']);
  });

  it('show a restricted reader only flows within its scopes, and refuse naming a hidden device like a missing one', async () => {
    const own = await flow(north, { type: 'alarms' });
    const admins = await flow(admin, { type: 'alarms' });
    const list = expectStatus<ListBody<{ id: string }>>(
      await north('GET', `/xapi/v1/integration-flows?accountId=${plant}&pageSize=100`),
      200,
    );
    expect(list.meta.total).toBe(list.data.length);
    expect(list.data.map((f) => f.id)).toContain(own.id);
    expect(list.data.map((f) => f.id)).not.toContain(admins.id);
    expect((await north('GET', `/xapi/v1/integration-flows/${admins.id}/runs`)).statusCode).toBe(404);

    const hidden = await north('POST', '/xapi/v1/integration-flows', {
      title: 'south meter',
      source: { type: 'packets', deviceIds: [device.south] },
      accountId: plant,
    });
    expect(hidden.statusCode, hidden.body).toBe(400);
    expect(hidden.body).toContain('no such device');
  });
});
