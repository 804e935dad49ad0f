import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, expectStatus, login, userWithPermissions } from './support/identity.js';
import type { Credentials, ListBody } from './support/identity.js';
import { insertConnector, insertDevice, sql } from './support/ingest-fixtures.js';
import { RecordingDispatch } from './support/recording-dispatch.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Alarm reports under permission scopes on real PostgreSQL: a report looks only at members of the
 * scopes recorded from whoever saved it last (its result and its mail name nothing else), and a
 * restricted reader sees only reports within its own scopes, without members it no longer sees.
 */

interface Report {
  id: string;
  permissionScopeIds: string[] | null;
  lastResult: { members: number; inAlarm: Array<{ id: string; title: string }> } | null;
}

let t: TestApp;
let admin: ReturnType<typeof caller>;
let north: ReturnType<typeof caller>;
let plant: string;
const scope = { north: '', south: '' };
const recorder = new RecordingDispatch();
const twin = { pump: '', boiler: '' };
const device = { meter: '', gauge: '' };
let smtp: string;

const group = async (target: 'twin' | 'device') =>
  expectStatus<{ id: string }>(
    await admin('POST', '/xapi/v1/smart-groups', { title: `all ${target}s`, target, accountId: plant }),
    201,
  ).id;
const report = async (by: ReturnType<typeof caller>, groupId: string, title: string) =>
  expectStatus<Report>(
    await by('POST', `/xapi/v1/smart-groups/${groupId}/alarm-reports`, {
      title,
      mailConnectorId: smtp,
      mailTo: ['shift@example.test'],
    }),
    201,
  );
const execute = async (by: ReturnType<typeof caller>, id: string) =>
  expectStatus<Report>(await by('POST', `/xapi/v1/alarm-reports/${id}/execute`), 200);
const titles = (r: Report) => r.lastResult!.inAlarm.map((m) => m.title).sort();

beforeAll(async () => {
  t = await createTestApp();
  t.services.outgoing.use(recorder);
  const adminCredentials: Credentials = bearer(await login(t));
  admin = caller(t, adminCredentials);
  plant = expectStatus<{ id: string }>(await admin('POST', '/xapi/v1/accounts', { title: 'Works' }), 201).id;
  for (const name of ['north', 'south'] as const)
    scope[name] = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/permission-scopes', { title: `${name} area`, accountId: plant }),
      201,
    ).id;
  const manager = await userWithPermissions(
    t,
    adminCredentials,
    'north reporter',
    ['smartGroup.read', 'alarmReport.manage', 'digitalTwin.read'],
    { accountId: plant, permissionScopeIds: [scope.north] },
  );
  north = caller(t, bearer(manager.token));

  for (const [name, title, area] of [
    ['pump', 'Pump North', scope.north],
    ['boiler', 'Boiler South', scope.south],
  ] as const) {
    twin[name] = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/digital-twins', { title, accountId: plant, permissionScopeId: area }),
      201,
    ).id;
    await t.services.alarmLogs.write({
      accountId: plant,
      category: 'Rule',
      message: `${title} hot`,
      reference: { type: 'digitalTwin', id: twin[name] },
    });
  }
  const connector = await insertConnector(t, plant, 'webhook-in');
  smtp = await insertConnector(t, plant, 'smtp-mail');
  for (const [name, title, area] of [
    ['meter', 'Meter North', scope.north],
    ['gauge', 'Gauge South', scope.south],
  ] as const) {
    device[name] = await insertDevice(t, {
      connectorId: connector,
      deviceKey: name,
      accountId: plant,
      title,
    });
    await sql(
      t,
      `UPDATE virtual_devices SET health_state = 'Critical', last_seen = now(), permission_scope_id = ? WHERE id = ?`,
      [area, device[name]],
    );
  }
}, 120_000);
afterAll(() => t?.close());

describe('alarm reports under permission scopes', () => {
  it('look only at members within the scopes recorded from the saver, in the result and the mail', async () => {
    const twins = await group('twin');
    const devices = await group('device');
    const ownTwins = await report(north, twins, 'north twins');
    expect(ownTwins.permissionScopeIds).toEqual([scope.north]);
    const ownDevices = await report(north, devices, 'north devices');
    expect(titles(await execute(north, ownTwins.id))).toEqual(['Pump North']);
    expect(titles(await execute(north, ownDevices.id))).toEqual(['Meter North']);
    const mails = [
      ...recorder.from('alarm-report', ownTwins.id),
      ...recorder.from('alarm-report', ownDevices.id),
    ];
    expect(mails).toHaveLength(2);
    for (const mail of mails) {
      expect(JSON.stringify(mail.message)).not.toContain('South');
      expect(JSON.stringify(mail.message)).not.toContain(twin.boiler);
    }

    // The same group reported by an unrestricted admin covers the whole account.
    const everything = await report(admin, twins, 'all twins');
    expect(everything.permissionScopeIds).toBeNull();
    expect(titles(await execute(admin, everything.id))).toEqual(['Boiler South', 'Pump North']);
  });

  it('list exactly the reports a single read finds: none reaching beyond the reader', async () => {
    const twins = await group('twin');
    const own = await report(north, twins, 'mine');
    const admins = await report(admin, twins, 'admin’s');
    await execute(admin, admins.id);
    const list = expectStatus<ListBody<Report>>(
      await north('GET', `/xapi/v1/alarm-reports?accountId=${plant}&pageSize=100`),
      200,
    );
    expect(list.meta.total).toBe(list.data.length);
    const ids = list.data.map((r) => r.id);
    expect(ids).toContain(own.id);
    expect(ids).not.toContain(admins.id);
    expect(JSON.stringify(list)).not.toContain('South');
    for (const [method, path] of [
      ['GET', ''],
      ['PUT', ''],
      ['DELETE', ''],
      ['POST', '/execute'],
    ] as const)
      expect(
        (await north(method, `/xapi/v1/alarm-reports/${admins.id}${path}`, method === 'PUT' ? {} : undefined))
          .statusCode,
      ).toBe(404);
  });

  it('leave a member the reader no longer sees out of the last result', async () => {
    const own = await report(north, await group('twin'), 'moving');
    expect(titles(await execute(north, own.id))).toEqual(['Pump North']);
    expectStatus(
      await admin('PUT', `/xapi/v1/digital-twins/${twin.pump}`, { permissionScopeId: scope.south }),
      200,
    );
    try {
      const seen = expectStatus<Report>(await north('GET', `/xapi/v1/alarm-reports/${own.id}`), 200);
      expect(seen.lastResult?.inAlarm).toEqual([]);
      expect(
        titles(expectStatus<Report>(await admin('GET', `/xapi/v1/alarm-reports/${own.id}`), 200)),
      ).toEqual(['Pump North']);
    } finally {
      expectStatus(
        await admin('PUT', `/xapi/v1/digital-twins/${twin.pump}`, { permissionScopeId: scope.north }),
        200,
      );
    }
  });
});
