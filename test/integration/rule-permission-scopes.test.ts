import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, expectStatus, login, userWithPermissions } from './support/identity.js';
import type { Credentials, ListBody } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Rules and the alarm log under permission scopes, on real PostgreSQL through the real state
 * engine: a rule runs only over twins of the scopes recorded from whoever saved it last, its
 * placeholders never render a twin outside them, and readers see rules and alarm entries only
 * about twins they see themselves.
 *
 *   Site (north) ─ Annex (own scope south) ─ Valve      Pump (north)   Boiler (south)
 */

interface Rule {
  id: string;
  twinId: string | null;
  permissionScopeIds: string[] | null;
  lastRun: { twinId: string | null; commands: Array<{ type: string; ok: boolean }> } | null;
}
interface Alarm {
  id: string;
  message: string;
  reference: { type: string; id: string } | null;
  source: { kind: string; id: string } | null;
}

let t: TestApp;
let adminCredentials: Credentials;
let admin: ReturnType<typeof caller>;
let plant: string;
const scope = { north: '', south: '' };
const as = {} as Record<'north' | 'south', ReturnType<typeof caller>>;
const twin = {} as Record<'site' | 'annex' | 'valve' | 'pump' | 'boiler', string>;
const temp = {} as Record<'valve' | 'pump' | 'boiler', string>;

const ALARM_TEXT = 'hot: {{twin.title}} id={{twin.id}} temp={{states.temp}} at={{twin.hierarchy}}';
const eventRule = (title: string, extra: Record<string, unknown> = {}) => ({
  title,
  accountId: plant,
  trigger: {
    type: 'event',
    conditions: [{ stateKey: 'temp', operator: '>', value: 50 }],
    onChangeOnly: false,
  },
  commands: [{ type: 'alarm', message: ALARM_TEXT }],
  ...extra,
});

const createRule = async (by: ReturnType<typeof caller>, body: Record<string, unknown>) =>
  expectStatus<Rule>(await by('POST', '/xapi/v1/rules', body), 201);

/** Sets a state through the API and waits until the rules have looked at the change. */
async function setTemp(stateId: string, value: number) {
  expectStatus(await admin('PUT', `/xapi/v1/states/${stateId}`, { value }), 200);
  // The engine's listener runs right after the commit that made the value visible: let it queue.
  await new Promise((resolve) => setTimeout(resolve, 50));
  await t.services.ruleEngine.idle();
}

async function alarms(by: ReturnType<typeof caller>, query = ''): Promise<ListBody<Alarm>> {
  const body = expectStatus<ListBody<Alarm>>(
    await by('GET', `/xapi/v1/alarm-logs?accountId=${plant}&pageSize=500${query}`),
    200,
  );
  expect(body.meta.total).toBe(body.data.length);
  return body;
}
const ofRule = async (ruleId: string, by = admin) =>
  (await alarms(by)).data.filter((a) => a.source?.id === ruleId);

async function ruleIds(by: ReturnType<typeof caller>): Promise<string[]> {
  const body = expectStatus<ListBody<Rule>>(
    await by('GET', `/xapi/v1/rules?accountId=${plant}&pageSize=100`),
    200,
  );
  expect(body.meta.total).toBe(body.data.length);
  return body.data.map((r) => r.id);
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
    const manager = await userWithPermissions(
      t,
      adminCredentials,
      `${name} manager`,
      ['digitalTwin.manage', 'rule.manage', 'alarmLog.manage'],
      { accountId: plant, permissionScopeIds: [scope[name]] },
    );
    as[name] = caller(t, bearer(manager.token));
  }
  const newTwin = async (title: string, body: Record<string, unknown>) =>
    expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/digital-twins', { title, accountId: plant, ...body }),
      201,
    ).id;
  twin.site = await newTwin('Site', { permissionScopeId: scope.north });
  twin.annex = await newTwin('Annex', {
    parentId: twin.site,
    useParentScope: false,
    permissionScopeId: scope.south,
  });
  twin.valve = await newTwin('Valve', { parentId: twin.annex });
  twin.pump = await newTwin('Pump', { permissionScopeId: scope.north });
  twin.boiler = await newTwin('Boiler', { permissionScopeId: scope.south });
  for (const name of ['valve', 'pump', 'boiler'] as const) {
    temp[name] = expectStatus<{ id: string }>(
      await admin('POST', `/xapi/v1/digital-twins/${twin[name]}/states`, {
        key: 'temp',
        valueType: 'number',
      }),
      201,
    ).id;
  }
}, 120_000);
afterAll(() => t?.close());

describe('rules under permission scopes', () => {
  it('run an account-wide rule of a restricted user only over its twins; the alarm names nothing else', async () => {
    const rule = await createRule(as.north, eventRule('north heat'));
    expect(rule.permissionScopeIds).toEqual([scope.north]);
    await setTemp(temp.pump, 71);
    await setTemp(temp.boiler, 93);
    await setTemp(temp.valve, 94);

    const entries = await ofRule(rule.id);
    expect(entries.map((a) => a.message)).toEqual([`hot: Pump id=${twin.pump} temp=71 at=Pump`]);
    expect(entries[0]!.reference).toEqual({ type: 'digitalTwin', id: twin.pump });
    const seen = JSON.stringify(expectStatus(await as.north('GET', `/xapi/v1/rules/${rule.id}`), 200));
    expect(seen).toContain(twin.pump);
    for (const hidden of [twin.boiler, twin.valve, 'Boiler', 'Valve']) expect(seen).not.toContain(hidden);
  });

  it('leave ancestors outside the rule’s scopes out of {{twin.hierarchy}}', async () => {
    const rule = await createRule(as.south, eventRule('south valve', { twinId: twin.valve }));
    await setTemp(temp.valve, 95);
    expect((await ofRule(rule.id)).map((a) => a.message)).toEqual([
      `hot: Valve id=${twin.valve} temp=95 at=Annex / Valve`,
    ]);
  });

  it('keep the restriction recorded at the last save: the creator’s later scopes do not matter, an unrestricted save lifts it', async () => {
    const rule = await createRule(as.north, eventRule('recorded'));
    // The creator is moved to the south area: the rule still runs over the north only.
    const users = expectStatus<ListBody<{ id: string; email: string }>>(
      await admin('GET', `/xapi/v1/users?accountId=${plant}&pageSize=100`),
      200,
    );
    const northManager = users.data.find((u) => u.email.startsWith('north-manager'))!;
    expectStatus(
      await admin('PUT', `/xapi/v1/users/${northManager.id}`, { permissionScopeIds: [scope.south] }),
      200,
    );
    try {
      await setTemp(temp.boiler, 81);
      expect(await ofRule(rule.id)).toEqual([]);
      // Saved by an unrestricted admin: from now on the rule runs over every twin of the account.
      expect(
        expectStatus<Rule>(
          await admin('PUT', `/xapi/v1/rules/${rule.id}`, { title: 'recorded, widened' }),
          200,
        ).permissionScopeIds,
      ).toBeNull();
      await setTemp(temp.boiler, 82);
      expect((await ofRule(rule.id)).map((a) => a.message)).toEqual([
        `hot: Boiler id=${twin.boiler} temp=82 at=Boiler`,
      ]);
    } finally {
      expectStatus(
        await admin('PUT', `/xapi/v1/users/${northManager.id}`, { permissionScopeIds: [scope.north] }),
        200,
      );
    }
  });

  it('do not run a time rule whose twin has left the rule’s scopes', async () => {
    const rule = await createRule(as.north, {
      title: 'north tick',
      twinId: twin.pump,
      trigger: { type: 'time', schedule: { intervalSeconds: 60 } },
      commands: [{ type: 'alarm', message: 'tick {{twin.title}} {{states.temp}}' }],
    });
    const later = (minutes: number) => new Date(Date.now() + minutes * 60_000);
    expect(await t.services.ruleScheduler.runDue(later(2))).toContain(rule.id);
    expect(await ofRule(rule.id)).toHaveLength(1);

    expectStatus(
      await admin('PUT', `/xapi/v1/digital-twins/${twin.pump}`, { permissionScopeId: scope.south }),
      200,
    );
    try {
      expect(await t.services.ruleScheduler.runDue(later(4))).not.toContain(rule.id);
      expect(await ofRule(rule.id)).toHaveLength(1);
    } finally {
      expectStatus(
        await admin('PUT', `/xapi/v1/digital-twins/${twin.pump}`, { permissionScopeId: scope.north }),
        200,
      );
    }
  });

  it('refuse commands naming a state of a twin the saver does not see, like a missing one', async () => {
    const response = await as.north('POST', '/xapi/v1/rules', {
      title: 'write south',
      accountId: plant,
      trigger: { type: 'time', schedule: { intervalSeconds: 3600 } },
      commands: [{ type: 'set-state', stateId: temp.boiler, value: 1 }],
    });
    expect(response.statusCode, response.body).toBe(422);
    expect(response.body).toContain('no such state');
  });

  it('list exactly the rules a single read finds: none bound to a hidden twin or reaching beyond the reader', async () => {
    const own = await createRule(as.north, eventRule('north own'));
    const boundHidden = await createRule(admin, eventRule('admin boiler', { twinId: twin.boiler }));
    const accountWide = await createRule(admin, eventRule('admin everywhere'));
    const south = await createRule(as.south, eventRule('south own'));

    const listed = await ruleIds(as.north);
    expect(listed).toContain(own.id);
    for (const id of [boundHidden.id, accountWide.id, south.id]) {
      expect(listed).not.toContain(id);
      expect((await as.north('GET', `/xapi/v1/rules/${id}`)).statusCode).toBe(404);
      expect((await as.north('PUT', `/xapi/v1/rules/${id}`, { title: 'taken' })).statusCode).toBe(404);
      expect((await as.north('DELETE', `/xapi/v1/rules/${id}`)).statusCode).toBe(404);
    }
    for (const id of listed) expect((await as.north('GET', `/xapi/v1/rules/${id}`)).statusCode).toBe(200);
    // Unrestricted readers see them all.
    expect(await ruleIds(admin)).toEqual(
      expect.arrayContaining([own.id, boundHidden.id, accountWide.id, south.id]),
    );
  });

  it('do not name a twin in a last run shown to a reader who no longer sees it', async () => {
    const rule = await createRule(as.north, eventRule('north moving'));
    await setTemp(temp.pump, 74);
    const lastRun = async (by: ReturnType<typeof caller>) =>
      expectStatus<Rule>(await by('GET', `/xapi/v1/rules/${rule.id}`), 200).lastRun;
    expect((await lastRun(as.north))?.twinId).toBe(twin.pump);
    expectStatus(
      await admin('PUT', `/xapi/v1/digital-twins/${twin.pump}`, { permissionScopeId: scope.south }),
      200,
    );
    try {
      expect(await lastRun(as.north)).toEqual({
        at: expect.any(String) as string,
        trigger: 'event',
        twinId: null,
        commands: [{ type: 'alarm', ok: true }],
      });
      expect((await lastRun(admin))?.twinId).toBe(twin.pump);
    } finally {
      expectStatus(
        await admin('PUT', `/xapi/v1/digital-twins/${twin.pump}`, { permissionScopeId: scope.north }),
        200,
      );
    }
  });
});

describe('the alarm log under permission scopes', () => {
  it('shows a restricted reader only entries about twins and devices it sees, in lists, counts and single reads', async () => {
    const everywhere = await createRule(admin, eventRule('admin alarm everywhere'));
    await setTemp(temp.pump, 73);
    await setTemp(temp.boiler, 96);
    const all = await ofRule(everywhere.id);
    expect(all.map((a) => a.reference?.id).sort()).toEqual([twin.pump, twin.boiler].sort());
    const hidden = all.find((a) => a.reference?.id === twin.boiler)!;
    const visible = all.find((a) => a.reference?.id === twin.pump)!;

    const connectorEntry = await t.services.alarmLogs.write({
      accountId: plant,
      category: 'Konnektorüberwachung',
      message: 'connector quiet',
      reference: { type: 'connector', id: twin.site },
    });
    const unknownKind = await t.services.alarmLogs.write({
      accountId: plant,
      category: 'other',
      message: 'about something new',
      reference: { type: 'somethingNew', id: twin.site },
    });

    const north = await alarms(as.north);
    const ids = north.data.map((a) => a.id);
    expect(ids).toContain(visible.id);
    expect(ids).toContain(connectorEntry.id);
    expect(ids).not.toContain(hidden.id);
    expect(ids).not.toContain(unknownKind.id);
    expect(JSON.stringify(north)).not.toContain('Boiler');
    // The navigation badge counts open entries through meta.total.
    const open = await alarms(as.north, '&status=open&referenceId=' + twin.boiler);
    expect(open.meta.total).toBe(0);

    for (const path of ['', '/acknowledge', '/close']) {
      const method = path ? 'POST' : 'GET';
      expect((await as.north(method, `/xapi/v1/alarm-logs/${hidden.id}${path}`)).statusCode).toBe(404);
      expect((await as.north(method, `/xapi/v1/alarm-logs/${visible.id}${path}`)).statusCode).toBe(200);
    }
    expect((await admin('GET', `/xapi/v1/alarm-logs/${hidden.id}`)).statusCode).toBe(200);
  });
});
