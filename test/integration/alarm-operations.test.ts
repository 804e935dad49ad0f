import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { TestClock } from './support/auth.js';
import { bearer, caller, errorCode, expectStatus, login, userWithPermissions } from './support/identity.js';
import { insertConnector } from './support/ingest-fixtures.js';
import { RecordingDispatch } from './support/recording-dispatch.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { insertState, insertTwin } from './support/twin-fixtures.js';
import { waitFor } from './support/wait.js';

/**
 * Alarms as operators work with them: severity, one entry per open condition (occurrence count),
 * the rule's clear condition closing it, bulk acknowledge/close with tenant isolation, mails and
 * webhooks carrying severity and link, and live `alarms` messages scoped like the API.
 */

const clock = new TestClock();
const PUBLIC_URL = 'https://stellwerk.example';
let t: TestApp;
let admin: ReturnType<typeof caller>;
let tenantA: string;
let tenantB: string;
let tokenA: string;
let callA: ReturnType<typeof caller>;
let liveBase: string;
const recorder = new RecordingDispatch();

interface Alarm {
  id: string;
  status: string;
  severity: string;
  occurrenceCount: number;
  lastSeenAt: string;
  createdAt: string;
  message: string;
  closeReason: string | null;
  clearedBy: { kind: string; id: string } | null;
  acknowledgedBy: string | null;
}
interface List<T> {
  data: T[];
  meta: { total: number };
}
interface LiveMessage {
  type: string;
  alarms?: Array<Record<string, unknown>>;
  [key: string]: unknown;
}
interface Bulk {
  changed: string[];
  unchanged: string[];
  notFound: string[];
  more: boolean;
}

const write = (accountId: string, message: string, source = randomUUID()) =>
  t.services.alarmLogs.write({
    accountId,
    category: 'Test',
    message,
    source: { kind: 'rule', id: source },
    severity: 'minor',
  });

const alarm = async (id: string) => expectStatus<Alarm>(await admin('GET', `/xapi/v1/alarm-logs/${id}`), 200);

beforeAll(async () => {
  t = await createTestApp({ clock: clock.now, env: { STELLWERK_PUBLIC_URL: PUBLIC_URL } });
  t.services.outgoing.use(recorder);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  liveBase = `ws://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/xapi/v1/live`;
  admin = caller(t, bearer(await login(t)));
  tenantA = expectStatus<{ id: string }>(
    await admin('POST', '/xapi/v1/accounts', { title: 'Tenant A' }),
    201,
  ).id;
  tenantB = expectStatus<{ id: string }>(
    await admin('POST', '/xapi/v1/accounts', { title: 'Tenant B' }),
    201,
  ).id;
  tokenA = (
    await userWithPermissions(t, bearer(await login(t)), 'alarm operator', ['alarmLog.manage'], {
      accountId: tenantA,
    })
  ).token;
  callA = caller(t, bearer(tokenA));
}, 60_000);

afterAll(() => t?.close());

describe('rule alarms', () => {
  it('stay one entry while the condition repeats, carry severity and link, and close by the clear condition', async () => {
    const twin = await insertTwin(t, { title: 'Pump 3' });
    const pressure = await insertState(t, twin, 'pressure', null);
    t.services.stateEngine.definitionsChanged();
    const mail = await insertConnector(t, t.rootAccountId, 'smtp-mail');
    const hook = await insertConnector(t, t.rootAccountId, 'webhook-out');
    const ruleId = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/rules', {
        title: 'High pressure',
        twinId: twin,
        trigger: { type: 'event', conditions: [{ stateKey: 'pressure', operator: '>', value: 5 }] },
        commands: [
          {
            type: 'alarm',
            severity: 'major',
            message: '{{twin.title}} at {{states.pressure}} bar',
            clear: { conditions: [{ stateKey: 'pressure', operator: '<', value: 4.5 }] },
          },
          { type: 'email', connectorId: mail, subject: 'Pressure', body: 'High pressure.' },
          { type: 'webhook', connectorId: hook, body: { twin: '{{twin.id}}' } },
        ],
      }),
      201,
    ).id;
    const set = async (value: number) => {
      clock.advance(1000);
      await t.services.stateEngine.setValue(pressure, value, clock.now());
      await new Promise((resolve) => setTimeout(resolve, 20));
      await t.services.ruleEngine.idle();
    };
    const ofRule = async () =>
      expectStatus<List<Alarm>>(
        await admin('GET', '/xapi/v1/alarm-logs?pageSize=100&status=open,acknowledged,closed'),
        200,
      ).data.filter((a) => a.message.startsWith('Pump 3'));

    await set(5.2);
    const [first] = await ofRule();
    expect(first).toMatchObject({
      status: 'open',
      severity: 'major',
      occurrenceCount: 1,
      message: 'Pump 3 at 5.2 bar',
    });
    const link = `${PUBLIC_URL}/#/alarms?id=${first!.id}`;
    const sent = recorder.from('rule', ruleId);
    expect(sent[0]!.message.body).toBe(`High pressure.\n\nSeverity: major\nAlarm: ${link}`);
    expect(sent[1]!.message.body).toEqual({
      twin,
      alarm: { id: first!.id, severity: 'major', occurrenceCount: 1, link },
    });

    // Below the trigger but above the clear threshold (hysteresis): the entry stays open.
    await set(4.8);
    await set(5.5);
    const repeated = await ofRule();
    expect(repeated).toHaveLength(1);
    expect(repeated[0]).toMatchObject({
      id: first!.id,
      status: 'open',
      occurrenceCount: 2,
      message: 'Pump 3 at 5.5 bar',
    });
    expect(Date.parse(repeated[0]!.lastSeenAt)).toBeGreaterThan(Date.parse(repeated[0]!.createdAt));

    await set(4.2);
    expect(await alarm(first!.id)).toMatchObject({
      status: 'closed',
      closeReason: 'cleared',
      clearedBy: { kind: 'rule', id: ruleId },
      occurrenceCount: 2,
    });

    // A crossing after the clear is a new entry.
    await set(6);
    const after = await ofRule();
    expect(after.map((a) => [a.status, a.occurrenceCount])).toEqual([
      ['open', 1],
      ['closed', 2],
    ]);
  });

  it('are listed by severity, filtered and sorted most severe first', async () => {
    const account = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/accounts', { title: 'Severity' }),
      201,
    ).id;
    for (const severity of ['info', 'critical', 'warning', 'major'] as const)
      await t.services.alarmLogs.write({ accountId: account, category: 'S', message: severity, severity });
    const sorted = expectStatus<List<Alarm>>(
      await admin('GET', `/xapi/v1/alarm-logs?accountId=${account}&sort=-severity`),
      200,
    );
    expect(sorted.data.map((a) => a.severity)).toEqual(['critical', 'major', 'warning', 'info']);
    const filtered = expectStatus<List<Alarm>>(
      await admin('GET', `/xapi/v1/alarm-logs?accountId=${account}&severity=critical,major&sort=severity`),
      200,
    );
    expect(filtered.data.map((a) => a.severity)).toEqual(['major', 'critical']);
    expect((await admin('GET', '/xapi/v1/alarm-logs?severity=fatal')).statusCode).toBe(400);
  });
});

describe('bulk acknowledge and close', () => {
  it('change listed entries of the caller’s tenant and report another tenant’s ids as not found, untouched', async () => {
    const a1 = (await write(tenantA, 'a1')).id;
    const a2 = (await write(tenantA, 'a2')).id;
    const b1 = (await write(tenantB, 'b1')).id;
    const missing = randomUUID();
    const acked = expectStatus<Bulk>(
      await callA('POST', '/xapi/v1/alarm-logs/acknowledge', { ids: [a1, a2, b1, missing] }),
      200,
    );
    expect(acked.changed.sort()).toEqual([a1, a2].sort());
    expect(acked.notFound.sort()).toEqual([b1, missing].sort());
    expect(await alarm(b1)).toMatchObject({ status: 'open', acknowledgedBy: null });
    expect((await alarm(a1)).status).toBe('acknowledged');

    // Again: nothing changes; closing takes open and acknowledged ones alike.
    const again = expectStatus<Bulk>(
      await callA('POST', '/xapi/v1/alarm-logs/acknowledge', { ids: [a1] }),
      200,
    );
    expect(again).toEqual({ changed: [], unchanged: [a1], notFound: [], more: false });
    const closed = expectStatus<Bulk>(
      await callA('POST', '/xapi/v1/alarm-logs/close', { ids: [a1, b1] }),
      200,
    );
    expect(closed).toMatchObject({ changed: [a1], notFound: [b1] });
    expect(await alarm(a1)).toMatchObject({ status: 'closed', closeReason: 'manual' });
    expect((await alarm(b1)).status).toBe('open');
  });

  it('by filter act within the caller’s own tenant only', async () => {
    const a3 = (await write(tenantA, 'a3')).id;
    const b2 = (await write(tenantB, 'b2')).id;
    const result = expectStatus<Bulk>(
      await callA('POST', '/xapi/v1/alarm-logs/close', { filter: { status: 'open,acknowledged' } }),
      200,
    );
    expect(result.changed).toContain(a3);
    expect(result.changed).not.toContain(b2);
    expect((await alarm(b2)).status).toBe('open');
    // Naming another tenant's account in the filter is refused like reading its list.
    const foreign = await callA('POST', '/xapi/v1/alarm-logs/close', { filter: { accountId: tenantB } });
    expect(foreign.statusCode).toBe(404);
    expect((await alarm(b2)).status).toBe('open');
  });

  it('need alarmLog.manage', async () => {
    const reader = await userWithPermissions(t, bearer(await login(t)), 'alarm reader', ['alarmLog.read'], {
      accountId: tenantA,
    });
    const response = await caller(t, bearer(reader.token))('POST', '/xapi/v1/alarm-logs/close', {
      ids: [randomUUID()],
    });
    expect(response.statusCode).toBe(403);
    expect(errorCode(response)).toBe('NO_PERMISSION_ALARMLOG.MANAGE');
  });
});

describe('live alarms', () => {
  async function follow(token: string) {
    const socket = new WebSocket(liveBase, ['stellwerk.live.v1', `bearer.${token}`]);
    const messages: LiveMessage[] = [];
    socket.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString('utf8')) as LiveMessage));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    socket.send(JSON.stringify({ subscribe: { alarms: true } }));
    const next = (type: string) =>
      waitFor(
        async () => {
          const index = messages.findIndex((m) => m.type === type);
          return index >= 0 ? messages.splice(index, 1)[0] : undefined;
        },
        5000,
        { intervalMs: 20, what: `a ${type} message` },
      );
    return { socket, messages, next };
  }

  it('reach the consoles that may read the entry, with severity and count, and never another tenant', async () => {
    const a = await follow(tokenA);
    const root = await follow(await login(t));
    expect(await a.next('subscribed')).toMatchObject({ alarms: true });
    await root.next('subscribed');

    const b = await write(tenantB, 'only for B and above');
    const rootSaw = await root.next('alarms');
    expect(rootSaw.alarms!.map((e) => e.id)).toEqual([b.id]);

    const source = randomUUID();
    const entry = await write(tenantA, 'for A', source);
    await write(tenantA, 'for A again', source);
    const first = await a.next('alarms');
    expect(first.alarms![0]).toMatchObject({
      id: entry.id,
      severity: 'minor',
      status: 'open',
      occurrenceCount: 1,
    });
    const second = await a.next('alarms');
    expect(second.alarms![0]).toMatchObject({ id: entry.id, occurrenceCount: 2, message: 'for A again' });
    await callA('POST', '/xapi/v1/alarm-logs/acknowledge', { ids: [entry.id] });
    expect((await a.next('alarms')).alarms![0]).toMatchObject({
      id: entry.id,
      status: 'acknowledged',
    });
    // Tenant A's console was told about none of tenant B's entries.
    await root.next('alarms');
    expect(a.messages.filter((m) => JSON.stringify(m).includes(b.id))).toEqual([]);
    a.socket.close();
    root.socket.close();
  });

  it('reach a user restricted to permission scopes only for entries about twins of its scopes', async () => {
    const scopeIn = async (title: string) =>
      expectStatus<{ id: string }>(
        await admin('POST', '/xapi/v1/permission-scopes', { title, accountId: tenantA }),
        201,
      ).id;
    const [hall1, hall2] = [await scopeIn('Hall 1'), await scopeIn('Hall 2')];
    const twinIn = async (title: string, permissionScopeId: string) =>
      expectStatus<{ id: string }>(
        await admin('POST', '/xapi/v1/digital-twins', { accountId: tenantA, title, permissionScopeId }),
        201,
      ).id;
    const [pump1, pump2] = [await twinIn('Hall 1 pump', hall1), await twinIn('Hall 2 pump', hall2)];
    const scoped = await userWithPermissions(
      t,
      bearer(await login(t)),
      'Hall 1 operator',
      ['alarmLog.read'],
      {
        accountId: tenantA,
        permissionScopeIds: [hall1],
      },
    );
    const c = await follow(scoped.token);
    await c.next('subscribed');
    const about = (twinId: string, message: string) =>
      t.services.alarmLogs.write({
        accountId: tenantA,
        category: 'Test',
        message,
        reference: { type: 'digitalTwin', id: twinId },
      });
    const hidden = await about(pump2, 'hall 2 only');
    const seen = await about(pump1, 'hall 1');
    expect((await c.next('alarms')).alarms!.map((e) => e.id)).toEqual([seen.id]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(c.messages.filter((m) => JSON.stringify(m).includes(hidden.id))).toEqual([]);
    c.socket.close();
  });

  it('are refused without alarmLog.read', async () => {
    const viewer = await userWithPermissions(t, bearer(await login(t)), 'twin viewer', ['digitalTwin.read'], {
      accountId: tenantA,
    });
    const c = await follow(viewer.token);
    expect(await c.next('error')).toMatchObject({ error: { code: 'NO_PERMISSION_ALARMLOG.READ' } });
    await write(tenantA, 'not for viewers');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(c.messages.filter((m) => m.type === 'alarms')).toEqual([]);
    c.socket.close();
  });
});
