import { bearer, caller, expectStatus, login, userWithPermissions, type Credentials } from './identity.js';
import { sql } from './ingest-fixtures.js';
import type { TestApp } from './test-app.js';

/**
 * The world of the route-table scope probe (scope-route-probe.ts): one account with two permission
 * scopes, a user with every permission restricted to `north`, and objects of both scopes made by
 * the unrestricted administrator — rules that fired, alarm entries, an alarm report that ran, a
 * dashboard, a device with a health alarm, a time-series point — so any read that ignored the
 * restriction has something south to show. `hiddenMarkers` are the titles, ids and values of the
 * south objects: no reply to the restricted user may contain one.
 */

export type Call = ReturnType<typeof caller>;

export interface ScopeWorld {
  accountId: string;
  scopes: { north: string; south: string };
  /** The restricted user (all permissions, scope north): its credentials and a caller. */
  credentials: Credentials;
  as: Call;
  userId: string;
  admin: Call;
  adminToken: string;
  /** The built-in role a user may be given (path parameter `:roleId`). */
  roleId: string;
  /** A twin of each scope, the parents of per-call fixtures. */
  parents: { visible: string; hidden: string };
  hiddenMarkers: string[];
  /** Objects not bound to scopes that name south objects (read routes must show them without). */
  shared: Record<string, string>;
}

const MARK = 'zq7';
/** A value only the south state ever has: it must never reach the restricted user. */
export const HIDDEN_VALUE = 4242.4242;

export const uniq = () => Math.random().toString(36).slice(2, 10);

export function created(response: { statusCode: number; body: string }): string {
  if (response.statusCode < 200 || response.statusCode >= 300)
    throw new Error(`fixture: ${response.statusCode} ${response.body.slice(0, 300)}`);
  return (JSON.parse(response.body) as { id: string }).id;
}

export async function buildScopeWorld(t: TestApp): Promise<ScopeWorld> {
  const adminToken = await login(t);
  const admin = caller(t, bearer(adminToken));
  const accountId = created(await admin('POST', '/xapi/v1/accounts', { title: 'Scope works' }));
  const scope = async (title: string) =>
    created(await admin('POST', '/xapi/v1/permission-scopes', { title, accountId }));
  const scopes = { north: await scope('North area'), south: await scope(`South area ${MARK}`) };
  const user = await userWithPermissions(t, bearer(adminToken), 'Scope prober', ['all.manage'], {
    accountId,
    permissionScopeIds: [scopes.north],
  });
  const as = caller(t, bearer(user.token));
  const roles = expectStatus<{ data: Array<{ id: string; name: string }> }>(
    await admin('GET', '/xapi/v1/roles?pageSize=100'),
    200,
  );
  const roleId = roles.data.find((r) => r.name === 'AccountReader')!.id;

  const hiddenMarkers: string[] = [scopes.south, `South area ${MARK}`, String(HIDDEN_VALUE)];
  const twin = async (title: string, permissionScopeId: string, parentId?: string) =>
    created(
      await admin('POST', '/xapi/v1/digital-twins', {
        title,
        accountId,
        ...(parentId ? { parentId } : { permissionScopeId }),
      }),
    );
  const hidden = await twin(`Hidden boiler ${MARK}`, scopes.south);
  const hiddenChild = await twin(`Hidden valve ${MARK}`, scopes.south, hidden);
  const visible = await twin('Visible pump', scopes.north);
  const state = (twinId: string, key: string) =>
    admin('POST', `/xapi/v1/digital-twins/${twinId}/states`, { key, valueType: 'number' }).then(created);
  const hiddenState = await state(hidden, `hiddenkey${MARK}`);
  const visibleState = await state(visible, 'level');
  hiddenMarkers.push(hidden, hiddenChild, `Hidden boiler ${MARK}`, `Hidden valve ${MARK}`, hiddenState);
  await sql(t, "INSERT INTO ts_points (state_id, time, value) VALUES (?, now() - interval '1 hour', ?)", [
    hiddenState,
    HIDDEN_VALUE,
  ]);

  // A device of each scope; the south one in alarm, with an alarm entry about it.
  const connector = created(
    await admin('POST', '/xapi/v1/connectors', { type: 'webhook-in', title: 'in', accountId }),
  );
  const device = async (title: string, permissionScopeId: string) =>
    created(
      await admin('POST', '/xapi/v1/virtual-devices', {
        device_id: title.replaceAll(' ', '-'),
        title,
        accountId,
        connectorId: connector,
        permissionScopeId,
      }),
    );
  const hiddenDevice = await device(`Hidden meter ${MARK}`, scopes.south);
  await device('Visible meter', scopes.north);
  await sql(t, "UPDATE virtual_devices SET health_state = 'Critical', last_seen = now() WHERE id = ?", [
    hiddenDevice,
  ]);
  const deviceAlarm = await t.services.alarmLogs.write({
    accountId,
    category: 'Health',
    message: `Hidden meter ${MARK} is critical`,
    reference: { type: 'virtualDevice', id: hiddenDevice },
  });
  hiddenMarkers.push(hiddenDevice, `Hidden meter ${MARK}`, `Hidden-meter-${MARK}`, deviceAlarm.id);

  // Rules of both kinds of saver fire on a change of each twin's state.
  const heat = {
    accountId,
    trigger: { type: 'event', conditions: [{ stateKey: `hiddenkey${MARK}`, operator: '>', value: 1 }] },
    commands: [{ type: 'alarm', message: `hot {{twin.title}} {{twin.id}} {{states.hiddenkey${MARK}}}` }],
  };
  created(await admin('POST', '/xapi/v1/rules', { ...heat, title: 'admin heat' }));
  created(await admin('POST', '/xapi/v1/rules', { ...heat, title: 'admin boiler', twinId: hidden }));
  created(await as('POST', '/xapi/v1/rules', { ...heat, title: 'prober heat' }));
  expectStatus(await admin('PUT', `/xapi/v1/states/${hiddenState}`, { value: HIDDEN_VALUE }), 200);
  await new Promise((resolve) => setTimeout(resolve, 50));
  await t.services.ruleEngine.idle();
  const hiddenAlarms = await sql<{ id: string }>(
    t,
    "SELECT id FROM alarm_logs WHERE reference_type = 'digitalTwin' AND reference_id = ?",
    [hidden],
  );
  if (hiddenAlarms.length < 2) throw new Error('world: the administrator’s rules did not fire');
  hiddenMarkers.push(...hiddenAlarms.map((a) => a.id));

  // Reports over all twins, one run by each kind of saver; a dashboard naming both scopes' twins.
  const group = created(
    await admin('POST', '/xapi/v1/smart-groups', { title: 'All twins', target: 'twin', accountId }),
  );
  for (const by of [admin, as]) {
    const report = created(
      await by('POST', `/xapi/v1/smart-groups/${group}/alarm-reports`, { title: `report ${uniq()}` }),
    );
    expectStatus(await by('POST', `/xapi/v1/alarm-reports/${report}/execute`), 200);
  }
  const widget = { type: 'gauge', title: '', x: 0, y: 0, w: 3, h: 4 };
  const dashboard = created(
    await admin('POST', '/xapi/v1/dashboards', {
      title: 'Plant',
      accountId,
      layout: {
        version: 1,
        widgets: [
          { ...widget, id: 'a', twinId: hidden, stateIds: [hiddenState, visibleState] },
          { ...widget, id: 'b', x: 3, twinId: visible, stateIds: [visibleState] },
        ],
      },
    }),
  );

  return {
    accountId,
    scopes,
    credentials: bearer(user.token),
    as,
    userId: user.id,
    admin,
    adminToken,
    roleId,
    parents: { visible, hidden },
    hiddenMarkers,
    shared: { dashboard, smartGroup: group },
  };
}
