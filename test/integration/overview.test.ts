import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, errorCode, expectStatus, login, userWithPermissions } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * GET /xapi/v1/overview: devices by health, connectors by status, packets per minute, open alarms by
 * severity and offline gateways of one account, seeded through the API (health and gateway status
 * by SQL, as their evaluators would write them); parts follow the caller's permissions, counts
 * its permission scopes, and nothing of another tenant is counted.
 */

interface Overview {
  accountId: string;
  devices?: { total: number; byHealth: Array<{ state: string; count: number }> };
  connectors?: { total: number; active: number; inactive: number };
  ingest?: {
    minutes: Array<{ minute: string; packetsIn: number; packetsFailed: number }>;
    packetsIn: number;
    packetsFailed: number;
  };
  alarms?: {
    open: number;
    bySeverity: Record<string, number>;
    recent: Array<{ id: string; message: string; severity: string; status: string }>;
  };
  gateways?: { total: number; offline: number; offlineList: Array<{ title: string }> };
}

let t: TestApp;
let admin: ReturnType<typeof caller>;
let site: string;
let other: string;
let scope: string;

const sql = (query: string, params: unknown[]) => t.orm.em.getConnection().execute(query, params, 'run');

async function seedAccount(accountId: string, scaled: number, scopeId?: string): Promise<void> {
  const connector = expectStatus<{ id: string }>(
    await admin('POST', '/xapi/v1/connectors', { title: `in ${scaled}`, type: 'webhook-in', accountId }),
    201,
  ).id;
  const idle = expectStatus<{ id: string }>(
    await admin('POST', '/xapi/v1/connectors', { title: `idle ${scaled}`, type: 'webhook-in', accountId }),
    201,
  ).id;
  expectStatus(await admin('POST', `/xapi/v1/connectors/${idle}/deactivate`), 200);
  const health = ['Healthy', 'Healthy', 'Critical', null];
  for (const [n, state] of health.entries()) {
    const device = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/virtual-devices', {
        device_id: `d${scaled}-${n}`,
        title: `Device ${scaled}-${n}`,
        connectorId: connector,
        accountId,
        ...(n === 0 && scopeId ? { permissionScopeId: scopeId } : {}),
      }),
      201,
    ).id;
    // As the health evaluator writes it; no packet yet (null) stays Unknown.
    if (state)
      await sql(`UPDATE virtual_devices SET health_state = ?, last_seen = now() WHERE id = ?`, [
        state,
        device,
      ]);
  }
  t.services.connectorTelemetry.record(connector, 'in', 7 * scaled);
  t.services.connectorTelemetry.record(connector, 'failed', scaled);
  await t.services.connectorTelemetry.flush();
  const write = (severity: 'critical' | 'major' | 'info', message: string) =>
    t.services.alarmLogs.write({ accountId, category: 'Rule', message, severity });
  await write('critical', `pressure ${scaled}`);
  await write('major', `level ${scaled}`);
  const acknowledged = await write('info', `door ${scaled}`);
  expectStatus(await admin('POST', `/xapi/v1/alarm-logs/${acknowledged.id}/acknowledge`), 200);
  for (const [n, eui] of ['58a0cbfffe8000', '0016c001f153a1'].entries()) {
    const gateway = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/gateways', {
        eui: `${eui}${scaled}${n}`,
        title: `Gateway ${scaled}-${n}`,
        accountId,
      }),
      201,
    ).id;
    // As the status keeper writes it: one heard just now, one silent too long.
    await sql(`UPDATE gateways SET status = ?, last_seen_at = now() WHERE id = ?`, [
      n === 0 ? 'online' : 'offline',
      gateway,
    ]);
  }
}

beforeAll(async () => {
  t = await createTestApp();
  admin = caller(t, bearer(await login(t)));
  const account = (title: string) =>
    admin('POST', '/xapi/v1/accounts', { title, parentId: t.rootAccountId }).then(
      (r) => expectStatus<{ id: string }>(r, 201).id,
    );
  site = await account('Waterworks');
  other = await account('Other utility');
  scope = expectStatus<{ id: string }>(
    await admin('POST', '/xapi/v1/permission-scopes', { title: 'Pump hall', accountId: site }),
    201,
  ).id;
  await seedAccount(site, 1, scope);
  await seedAccount(other, 3);
}, 120_000);
afterAll(() => t?.close());

describe('overview', () => {
  it('counts the account’s devices by health, connectors by status, packets per minute, open alarms by severity and offline gateways, and no other tenant’s', async () => {
    const reader = await userWithPermissions(t, bearer(await login(t)), 'Site lead', ['all.read'], {
      accountId: site,
    });
    const body = expectStatus<Overview>(
      await caller(t, bearer(reader.token))('GET', '/xapi/v1/overview'),
      200,
    );
    expect(body.accountId).toBe(site);
    expect(body.devices).toEqual({
      total: 4,
      byHealth: [
        { state: 'Healthy', count: 2 },
        { state: 'Critical', count: 1 },
        { state: 'Unknown', count: 1 },
      ],
    });
    expect(body.connectors).toEqual({ total: 2, active: 1, inactive: 1 });
    expect(body.ingest).toMatchObject({ packetsIn: 7, packetsFailed: 1 });
    expect(body.ingest!.minutes).toHaveLength(60);
    // One flush, one minute (the current one, or the one before when the clock turned since).
    expect(body.ingest!.minutes.filter((m) => m.packetsIn > 0)).toMatchObject([
      { packetsIn: 7, packetsFailed: 1 },
    ]);
    expect(
      Date.parse(body.ingest!.minutes.at(-1)!.minute) - Date.parse(body.ingest!.minutes[0]!.minute),
    ).toBe(59 * 60_000);
    expect(body.alarms!.bySeverity).toEqual({ critical: 1, major: 1, minor: 0, warning: 0, info: 0 });
    expect(body.alarms!.open).toBe(2);
    expect(body.alarms!.recent.map((a) => a.message).sort()).toEqual(['door 1', 'level 1', 'pressure 1']);
    expect(body.gateways).toMatchObject({ total: 2, offline: 1, offlineList: [{ title: 'Gateway 1-1' }] });

    // The list links of the overview answer the same numbers.
    const total = async (url: string) =>
      expectStatus<{ meta: { total: number } }>(await admin('GET', `${url}&accountId=${site}`), 200).meta
        .total;
    expect(await total('/xapi/v1/virtual-devices?healthState=Critical')).toBe(1);
    expect(await total('/xapi/v1/virtual-devices?healthState=Unknown')).toBe(1);
    expect(await total('/xapi/v1/connectors?active=false')).toBe(1);
    expect(await total('/xapi/v1/alarm-logs?status=open&severity=critical')).toBe(1);
    expect(await total('/xapi/v1/gateways?status=offline')).toBe(1);

    // Another tenant's account cannot be asked for.
    const foreign = await caller(t, bearer(reader.token))('GET', `/xapi/v1/overview?accountId=${other}`);
    expect(foreign.statusCode).toBe(404);
  });

  it('leaves out the parts the caller may not read and counts within its permission scopes', async () => {
    const restricted = await userWithPermissions(
      t,
      bearer(await login(t)),
      'Pump hall operator',
      ['VirtualDevice.read'],
      {
        accountId: site,
        permissionScopeIds: [scope],
      },
    );
    const body = expectStatus<Overview>(
      await caller(t, bearer(restricted.token))('GET', '/xapi/v1/overview'),
      200,
    );
    expect(body.devices).toEqual({ total: 1, byHealth: [{ state: 'Healthy', count: 1 }] });
    expect(Object.keys(body).sort()).toEqual(['accountId', 'devices', 'generatedAt']);
  });

  it('answers bad input with a validation error', async () => {
    const bad = await admin('GET', '/xapi/v1/overview?accountId=not-an-id');
    expect(bad.statusCode).toBe(400);
    expect(errorCode(bad)).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(bad.json())).toContain('accountId');
  });
});
