import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  apiKey,
  bearer,
  caller,
  errorCode,
  expectStatus,
  login,
  userWithPermissions,
} from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';

/**
 * Public dashboards (docs/public-dashboards.md): publishing, rotating and revoking a dashboard's key
 * (audited, hashed at rest), the hub API's anonymous route that reads exactly the published
 * dashboard's widgets, twins, states and maps, its rate limit, and its live socket.
 */

let t: TestApp;
let admin: ReturnType<typeof caller>;
let base: string;
const ids: Record<string, string> = {};

interface Issued {
  key: string;
  keyPrefix: string;
  url: string;
  published: boolean;
}
interface PublicView {
  title: string;
  layout: { widgets: Record<string, unknown>[] };
  twins: { id: string; title: string }[];
  states: { id: string; key: string; value: unknown }[];
  maps: Record<string, { id: string; title: string }[]>;
}

let addresses = 0;
/** From a fresh address each, unless one is given: only the rate-limit test spends one address's budget. */
const anonymous = (dashboardId: string, key?: string, remoteAddress = `10.0.0.${++addresses}`) =>
  t.app.inject({
    url: `/hub/api/v1/public-dashboards/${dashboardId}`,
    headers: key ? { 'x-api-key': key } : {},
    remoteAddress,
  });

const publish = async (dashboardId: string) =>
  expectStatus<Issued>(await admin('POST', `/xapi/v1/dashboards/${dashboardId}/public-key`), 201);

const auditActions = async (dashboardId: string) =>
  expectStatus<{ data: { action: string; target: { id: string } | null }[] }>(
    await admin('GET', '/xapi/v1/audit-events?pageSize=500'),
    200,
  )
    .data.filter((e) => e.target?.id === dashboardId)
    .map((e) => e.action)
    .sort();

async function twinWithStates(title: string, keys: string[], extra: Record<string, unknown> = {}) {
  const twin = expectStatus<{ id: string }>(
    await admin('POST', '/xapi/v1/digital-twins', { title, ...extra }),
    201,
  ).id;
  const states: Record<string, string> = {};
  for (const key of keys)
    states[key] = expectStatus<{ id: string }>(
      await admin('POST', `/xapi/v1/digital-twins/${twin}/states`, { key, title: key, unit: 'bar' }),
      201,
    ).id;
  return { twin, states };
}

/** A live client on the public route, the key as subprotocol (as browsers send it). */
async function publicSocket(dashboardId: string, key: string) {
  const socket = new WebSocket(`${base}/hub/api/v1/public-dashboards/${dashboardId}/live`, [
    'stellwerk.live.v1',
    `dashboardkey.${key}`,
  ]);
  const messages: Record<string, unknown>[] = [];
  socket.on('message', (data: Buffer) =>
    messages.push(JSON.parse(data.toString('utf8')) as Record<string, unknown>),
  );
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const next = (type: string) =>
    waitFor(async () => messages.find((m) => m.type === type), 5000, {
      intervalMs: 20,
      what: `a ${type} message`,
    });
  return { socket, messages, next, closed, send: (body: unknown) => socket.send(JSON.stringify(body)) };
}

beforeAll(async () => {
  t = await createTestApp({ env: { STELLWERK_PUBLIC_DASHBOARD_RATE_LIMIT: '5' } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  base = `ws://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  admin = caller(t, bearer(await login(t)));
  const pump = await twinWithStates('Pump 1', ['pressure', 'secret'], {
    latitude: 48.1,
    longitude: 11.5,
    tags: ['site'],
  });
  const other = await twinWithStates('Pump 2', ['pressure'], { latitude: 48.2, longitude: 11.6 });
  Object.assign(ids, {
    pump: pump.twin,
    pressure: pump.states.pressure,
    secret: pump.states.secret,
    otherTwin: other.twin,
    otherPressure: other.states.pressure,
  });
  ids.tenant = expectStatus<{ id: string }>(
    await admin('POST', '/xapi/v1/accounts', { title: 'Tenant B' }),
    201,
  ).id;
  ids.foreignTwin = expectStatus<{ id: string }>(
    await admin('POST', '/xapi/v1/digital-twins', { title: 'Foreign pump', accountId: ids.tenant }),
    201,
  ).id;
  ids.second = expectStatus<{ id: string }>(
    await admin('POST', '/xapi/v1/dashboards', { title: 'Other board' }),
    201,
  ).id;
  const widget = (id: string, type: string, x: number, more: Record<string, unknown>) => ({
    id,
    type,
    x,
    y: 0,
    w: 2,
    h: 2,
    title: '',
    ...more,
  });
  ids.board = expectStatus<{ id: string }>(
    await admin('POST', '/xapi/v1/dashboards', {
      title: 'Control room',
      layout: {
        version: 1,
        widgets: [
          widget('gauge', 'gauge', 0, { twinId: ids.pump, stateIds: [ids.pressure] }),
          // A state of another twin named on this twin's widget is not shown.
          widget('raw', 'raw-values', 2, { twinId: ids.pump, stateIds: [ids.pressure, ids.otherPressure] }),
          widget('foreign', 'raw-values', 4, { twinId: ids.foreignTwin, stateIds: [] }),
          widget('map', 'map', 6, { tag: 'site' }),
          widget('nested', 'dashboard', 8, { dashboardId: ids.second }),
        ],
      },
    }),
    201,
  ).id;
}, 120_000);
afterAll(() => t?.close());

describe('public dashboards', () => {
  it('publishes with a key shown once and stored hashed; the status names only its prefix', async () => {
    const issued = await publish(ids.board!);
    expect(issued.key).toMatch(/^swd_[\w-]{43}$/);
    expect(issued.url).toMatch(new RegExp(`/public/dashboards/${ids.board}#key=${issued.key}$`));
    const rows = await t.orm.em
      .fork()
      .getConnection()
      .execute<{ key_hash: string; prefix: string }[]>(
        'SELECT key_hash, prefix FROM dashboard_shares WHERE dashboard_id = ?',
        [ids.board],
      );
    expect(rows).toEqual([
      { key_hash: createHash('sha256').update(issued.key).digest('hex'), prefix: issued.keyPrefix },
    ]);
    const status = expectStatus(await admin('GET', `/xapi/v1/dashboards/${ids.board}/public-key`), 200);
    expect(status).toMatchObject({ published: true, keyPrefix: issued.keyPrefix });
    expect(JSON.stringify(status)).not.toContain(issued.key);
    ids.key = issued.key;
  });

  it('shows without login exactly the widgets, twins, states and map of the published dashboard', async () => {
    const view = expectStatus<PublicView>(await anonymous(ids.board!, ids.key), 200);
    expect(view.title).toBe('Control room');
    expect(view.layout.widgets.map((w) => w.id)).toEqual(['gauge', 'raw', 'foreign', 'map']);
    expect(view.layout.widgets.find((w) => w.id === 'raw')?.stateIds).toEqual([ids.pressure]);
    expect(view.layout.widgets.find((w) => w.id === 'foreign')?.twinId).toBeUndefined();
    expect(view.twins.map((tw) => tw.title)).toEqual(['Pump 1']);
    expect(view.states.map((s) => s.id)).toEqual([ids.pressure]);
    expect(view.maps.map?.map((tw) => tw.title)).toEqual(['Pump 1']);
    const text = JSON.stringify(view);
    for (const hidden of [ids.secret, ids.otherTwin, ids.otherPressure, ids.foreignTwin, ids.second])
      expect(text).not.toContain(hidden);
  });

  it('refuses a missing key, an account API key, a session and another dashboard’s key alike', async () => {
    const key = expectStatus<{ key: string }>(
      await admin('POST', '/xapi/v1/api-keys', { title: 'all', permissions: ['all.manage'] }),
      201,
    ).key;
    const secondKey = (await publish(ids.second!)).key;
    const refusals = [
      await anonymous(ids.board!),
      await anonymous(ids.board!, key),
      await t.app.inject({
        url: `/hub/api/v1/public-dashboards/${ids.board}`,
        headers: { authorization: `Bearer ${await login(t)}` },
      }),
      await anonymous(ids.board!, secondKey),
    ];
    expect(refusals.map((r) => [r.statusCode, errorCode(r)])).toEqual(Array(4).fill([401, 'INVALID_TOKEN']));
    // And the dashboard key opens nothing else: neither the hub API nor the XAPI.
    expect((await t.app.inject({ url: '/hub/api/v1/devices', headers: apiKey(ids.key!) })).statusCode).toBe(
      401,
    );
    expect(
      (await t.app.inject({ url: `/xapi/v1/dashboards/${ids.board}`, headers: apiKey(ids.key!) })).statusCode,
    ).toBe(401);
  });

  it('is rate limited per address and dashboard', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await anonymous(ids.board!, ids.key, '10.9.8.7')).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const limited = await anonymous(ids.board!, ids.key, '10.9.8.7');
    expect(errorCode(limited)).toBe('API_LIMIT_REACHED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // The budget is the address's for this dashboard: another spelling of the key or another key buys none.
    for (const key of [` ${ids.key} `, 'swd_guessed'])
      expect((await anonymous(ids.board!, key, '10.9.8.7')).statusCode).toBe(429);
    expect((await anonymous(ids.board!, ids.key, '10.9.8.8')).statusCode).toBe(200);
  });

  it('needs dashboard.manage, and a user restricted to permission scopes cannot publish', async () => {
    const reader = await userWithPermissions(t, bearer(await login(t)), 'Board reader', ['dashboard.read']);
    const asReader = caller(t, bearer(reader.token));
    expect(errorCode(await asReader('POST', `/xapi/v1/dashboards/${ids.board}/public-key`))).toBe(
      'NO_PERMISSION_DASHBOARD.MANAGE',
    );
    expect(errorCode(await asReader('DELETE', `/xapi/v1/dashboards/${ids.board}/public-key`))).toBe(
      'NO_PERMISSION_DASHBOARD.MANAGE',
    );
    const scope = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/permission-scopes', { title: 'North' }),
      201,
    ).id;
    const scoped = await userWithPermissions(
      t,
      bearer(await login(t)),
      'Scoped manager',
      ['dashboard.manage'],
      {
        permissionScopeIds: [scope],
      },
    );
    expect(
      errorCode(await caller(t, bearer(scoped.token))('POST', `/xapi/v1/dashboards/${ids.board}/public-key`)),
    ).toBe('PERMISSION_SCOPE_RESTRICTED');
  });

  it('pushes live only the shown states of the shown twins, and closes the socket when the key is rotated', async () => {
    const client = await publicSocket(ids.board!, ids.key!);
    client.send({ subscribe: { twinIds: [ids.pump, ids.otherTwin], deviceIds: [] } });
    expect(await client.next('subscribed')).toMatchObject({ twinIds: [ids.pump], notFound: [ids.otherTwin] });
    client.send({ subscribe: { deviceIds: [ids.pump] } });
    expect(await client.next('error')).toMatchObject({ error: { code: 'NO_PERMISSION_VIRTUALDEVICE.READ' } });
    expectStatus(await admin('PUT', `/xapi/v1/states/${ids.secret}`, { value: 99 }), 200);
    expectStatus(await admin('PUT', `/xapi/v1/states/${ids.pressure}`, { value: 4.5 }), 200);
    const pushed = await waitFor(async () => client.messages.find((m) => m.type === 'states'), 5000, {
      what: 'a states message',
    });
    expect(pushed.states).toEqual([expect.objectContaining({ stateId: ids.pressure, value: 4.5 })]);
    expect(JSON.stringify(client.messages)).not.toContain(ids.secret);

    const rotated = await publish(ids.board!);
    expect(await client.closed).toBe(4401);
    expect((await anonymous(ids.board!, ids.key)).statusCode).toBe(401);
    expect((await anonymous(ids.board!, rotated.key)).statusCode).toBe(200);
    ids.key = rotated.key;
  });

  it('serves the history of the states it shows, and of no other', async () => {
    const history = (stateId: string) =>
      t.app.inject({
        url: `/hub/api/v1/public-dashboards/${ids.board}/history?stateId=${stateId}&range=1h`,
        headers: apiKey(ids.key!),
        remoteAddress: `10.0.1.${++addresses}`,
      });
    // Older and newer points beside the ones the state changes above stored, for a shown and a hidden state.
    const connection = t.orm.em.fork().getConnection();
    for (const stateId of [ids.pressure, ids.secret])
      await connection.execute(
        "INSERT INTO ts_points (state_id, time, value) VALUES (?, now() - interval '1 minute', 4.25), (?, now() - interval '2 hours', 3)",
        [stateId, stateId],
      );
    const { points } = expectStatus<{ points: { time: string; value: number }[] }>(
      await history(ids.pressure!),
      200,
    );
    // Only the last hour: the value pushed above (stored with its change) and the inserted one.
    expect(points.map((p) => p.value)).toContain(4.25);
    expect(points.map((p) => p.value)).toContain(4.5);
    expect(points.map((p) => p.value)).not.toContain(3);
    for (const point of points) expect(Date.now() - Date.parse(point.time)).toBeLessThan(3_600_000);
    for (const hidden of [ids.secret!, ids.otherPressure!])
      expect(errorCode(await history(hidden))).toBe('NOT_FOUND');
  });

  it('stops working at once when revoked, and every change is in the audit log', async () => {
    const client = await publicSocket(ids.board!, ids.key!);
    expectStatus(await admin('DELETE', `/xapi/v1/dashboards/${ids.board}/public-key`), 204);
    expect(await client.closed).toBe(4401);
    expect(errorCode(await anonymous(ids.board!, ids.key))).toBe('INVALID_TOKEN');
    expect(expectStatus(await admin('GET', `/xapi/v1/dashboards/${ids.board}/public-key`), 200)).toEqual({
      published: false,
      keyPrefix: null,
      issuedAt: null,
    });
    expect(await auditActions(ids.board!)).toEqual([
      'dashboard.publish',
      'dashboard.rotateKey',
      'dashboard.unpublish',
    ]);
    const refused = new WebSocket(`${base}/hub/api/v1/public-dashboards/${ids.board}/live`, [
      'stellwerk.live.v1',
      `dashboardkey.${ids.key}`,
    ]);
    refused.on('error', () => undefined);
    const status = await new Promise<number>((resolve) =>
      refused.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
    );
    expect(status).toBe(401);
  });
});
