import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import WebSocket from 'ws';
import { bearer, caller, expectStatus, login, userWithPermissions } from './support/identity.js';
import { insertConnector, insertDriver, packet } from './support/ingest-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { insertDevice, insertState, insertTwin, stateRows } from './support/twin-fixtures.js';
import { waitFor } from './support/wait.js';

/**
 * Live push of twin data-state changes (docs/live.md): packets go through the real ingest pipeline
 * and the state engine; the WebSocket client is a real one on a listening server.
 */

let t: TestApp;
let base: string;
let adminToken: string;
/** A user of tenant A (holding every permission there). */
let tenantAToken: string;
let tenantA: string;
let connectorA: string;
let deviceA: string;
let connectorB: string;
let twinA: string;
let twinB: string;
const stateIds: Record<string, string> = {};

interface Message {
  type: string;
  [key: string]: unknown;
}

interface StateEntry {
  twinId: string;
  stateId: string;
  key: string;
  value: unknown;
  timestamp: string;
  warning?: string;
}

/** A WebSocket client that collects every message; `states` messages are also kept as batches. */
async function connect(token: string) {
  const socket = new WebSocket(base, ['stellwerk.live.v1', `bearer.${token}`]);
  const messages: Message[] = [];
  const batches: StateEntry[][] = [];
  socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString('utf8')) as Message;
    if (message.type === 'states') batches.push(message.states as StateEntry[]);
    else messages.push(message);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const next = (type: string): Promise<Message> =>
    waitFor(
      async () => {
        const index = messages.findIndex((m) => m.type === type);
        return index >= 0 ? messages.splice(index, 1)[0] : undefined;
      },
      5000,
      { intervalMs: 20, what: `a ${type} message` },
    );
  const send = (body: unknown) => socket.send(JSON.stringify(body));
  return { socket, messages, batches, next, send };
}

/** Waits until the state engine has committed `value` for the twin's `key` (read from the database). */
const committed = (twinId: string, key: string, value: unknown) =>
  waitFor(async () => ((await stateRows(t, twinId))[key]?.value === value ? true : undefined), 10_000, {
    what: `${key} = ${JSON.stringify(value)} committed`,
  });

/** `stellwerk_live_messages_total` of one kind, from the metrics endpoint. */
async function liveMessages(kind: string): Promise<number> {
  const text = (await t.app.inject({ url: '/metrics' })).body;
  const line = text
    .split('\n')
    .find((l) => l.startsWith('stellwerk_live_messages_total{') && l.includes(`kind="${kind}"`));
  return Number(line?.split(' ').at(-1) ?? 0);
}

const quietPeriod = () => new Promise((resolve) => setTimeout(resolve, 300));

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  base = `ws://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/xapi/v1/live`;
  adminToken = await login(t);
  const admin = caller(t, bearer(adminToken));
  tenantA = expectStatus<{ id: string }>(
    await admin('POST', '/xapi/v1/accounts', { title: 'Tenant A' }),
    201,
  ).id;
  const tenantB = expectStatus<{ id: string }>(
    await admin('POST', '/xapi/v1/accounts', { title: 'Tenant B' }),
    201,
  ).id;
  tenantAToken = (
    await userWithPermissions(t, bearer(adminToken), 'Tenant A admin', ['all.manage'], {
      accountId: tenantA,
    })
  ).token;

  connectorA = await insertConnector(t, tenantA);
  deviceA = await insertDevice(
    t,
    await insertDriver(t, { type: 'json' }, tenantA),
    connectorA,
    'meter-a',
    null,
    tenantA,
  );
  twinA = await insertTwin(t, { accountId: tenantA, title: 'Pump A' });
  const source = (stateKey: string) => ({
    type: 'connector' as const,
    connectorId: connectorA,
    deviceId: deviceA,
    stateKey,
  });
  stateIds.temperature = await insertState(t, twinA, 'temperature', source('temperature'), {
    accountId: tenantA,
  });
  stateIds.humidity = await insertState(t, twinA, 'humidity', source('humidity'), { accountId: tenantA });
  stateIds.status = await insertState(t, twinA, 'status', source('status'), { accountId: tenantA });
  stateIds.total = await insertState(
    t,
    twinA,
    'total',
    { type: 'aggregate', operation: 'sum', stateIds: [stateIds.temperature, stateIds.humidity] },
    { accountId: tenantA },
  );

  connectorB = await insertConnector(t, tenantB);
  const deviceB = await insertDevice(
    t,
    await insertDriver(t, { type: 'json' }, tenantB),
    connectorB,
    'meter-b',
    null,
    tenantB,
  );
  twinB = await insertTwin(t, { accountId: tenantB, title: 'Pump B' });
  await insertState(
    t,
    twinB,
    'temperature',
    { type: 'connector', connectorId: connectorB, deviceId: deviceB, stateKey: 'temperature' },
    { accountId: tenantB },
  );
  t.services.stateEngine.definitionsChanged();
});
afterAll(() => t?.close());

describe('live push of twin states', () => {
  it('pushes the states a packet sets on its arrival, before the commit, and the derived ones after it, each once', async () => {
    const client = await connect(tenantAToken);
    client.send({ subscribe: { twinIds: [twinA] } });
    expect(await client.next('subscribed')).toEqual({
      type: 'subscribed',
      deviceIds: [],
      twinIds: [twinA],
      notFound: [],
    });
    // The twin's state rows are held by another transaction: the state engine cannot commit the
    // packet's changes until it lets go.
    const locker = new pg.Client({ connectionString: t.config.databaseUrl });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('SELECT id FROM data_states WHERE twin_id = $1 FOR UPDATE', [twinA]);
    let batch: StateEntry[];
    try {
      // A number state receiving text keeps the value and carries a warning.
      await t.services.packets.append(
        packet(connectorA, 'meter-a', { temperature: 21.5, humidity: 40, status: 'on' }),
      );
      batch = await waitFor(async () => client.batches[0], 10_000, { what: 'a states message' });
      // Shown while nothing of the packet is committed yet.
      expect((await stateRows(t, twinA)).temperature?.value).toBeNull();
    } finally {
      await locker.query('COMMIT');
      await locker.end();
    }
    const byKey = Object.fromEntries(batch.map((e) => [e.key, e]));
    expect(batch.map((e) => e.key)).toEqual(['temperature', 'humidity', 'status']);
    expect(byKey.humidity).toMatchObject({ stateId: stateIds.humidity, value: 40 });
    expect(byKey.status?.value).toBe('on');
    expect(byKey.status?.warning).toBe('value "on" does not fit value type number');
    expect('warning' in byKey.temperature!).toBe(false);

    // The aggregate follows once the packet is committed, and the states shown on arrival are not
    // pushed a second time.
    const [, derived] = await waitFor(
      async () => (client.batches.length > 1 ? client.batches : undefined),
      10_000,
      { what: 'a second states message' },
    );
    const rows = await stateRows(t, twinA);
    expect(rows.total?.value).toBe(61.5);
    expect(derived).toEqual([
      {
        twinId: twinA,
        stateId: stateIds.total,
        key: 'total',
        value: 61.5,
        timestamp: rows.total!.timestamp!.toISOString(),
      },
    ]);
    // What was shown on arrival is what was stored, time included.
    expect(byKey.temperature).toEqual({
      twinId: twinA,
      stateId: stateIds.temperature,
      key: 'temperature',
      value: 21.5,
      timestamp: rows.temperature!.timestamp!.toISOString(),
    });
    expect(rows.status?.warning).toBe(byKey.status?.warning);
    await quietPeriod();
    expect(client.batches).toHaveLength(2);
    // Counted per entry and console, by kind.
    expect(await liveMessages('states')).toBe(4);

    // A value the console already shows is not pushed again on arrival; a new one is.
    await t.services.packets.append(packet(connectorA, 'meter-a', { temperature: 21.5, humidity: 41 }));
    await committed(twinA, 'humidity', 41);
    const [humidity, total] = await waitFor(
      async () => (client.batches.length > 3 ? client.batches.slice(2) : undefined),
      10_000,
      { what: 'the new humidity and total' },
    );
    expect(humidity!.map((e) => [e.key, e.value])).toEqual([['humidity', 41]]);
    expect(total!.map((e) => [e.key, e.value])).toEqual([['total', 62.5]]);
    client.batches.splice(0);

    // Writes from the API side (StateValueSetter) are pushed too.
    await t.services.stateEngine.setValue(stateIds.humidity!, 42, new Date());
    const later = await waitFor(async () => client.batches[0], 5000, { what: 'the API write' });
    expect(later.map((e) => [e.key, e.value])).toEqual([
      ['humidity', 42],
      ['total', 63.5],
    ]);
    client.socket.close();
  });

  it("lists another tenant's twin and a missing one in notFound and pushes nothing of them", async () => {
    const client = await connect(tenantAToken);
    const missing = randomUUID();
    client.send({ subscribe: { twinIds: [twinB, twinA, missing] } });
    expect(await client.next('subscribed')).toMatchObject({ twinIds: [twinA], notFound: [twinB, missing] });
    await t.services.packets.append(packet(connectorB, 'meter-b', { temperature: 99 }));
    await committed(twinB, 'temperature', 99);
    await t.services.packets.append(packet(connectorA, 'meter-a', { temperature: 23 }));
    await committed(twinA, 'temperature', 23);
    const [batch] = await waitFor(
      async () => (client.batches.length > 0 ? client.batches : undefined),
      5000,
      {
        what: 'a states message',
      },
    );
    await quietPeriod();
    expect(batch!.length).toBeGreaterThan(0);
    expect(new Set(client.batches.flat().map((e) => e.twinId))).toEqual(new Set([twinA]));
    client.socket.close();
  });

  it('stops pushing after unsubscribe', async () => {
    const client = await connect(tenantAToken);
    client.send({ subscribe: { twinIds: [twinA] } });
    await client.next('subscribed');
    await t.services.packets.append(packet(connectorA, 'meter-a', { temperature: 24 }));
    await committed(twinA, 'temperature', 24);
    await waitFor(async () => (client.batches.length > 0 ? true : undefined), 5000, {
      what: 'a states message',
    });
    await quietPeriod();
    const before = client.batches.length;
    client.send({ unsubscribe: { twinIds: [twinA] } });
    expect(await client.next('unsubscribed')).toEqual({
      type: 'unsubscribed',
      deviceIds: [],
      twinIds: [twinA],
    });
    await t.services.packets.append(packet(connectorA, 'meter-a', { temperature: 25 }));
    await committed(twinA, 'temperature', 25);
    await quietPeriod();
    expect(client.batches).toHaveLength(before);
    client.socket.close();
  });

  it('pushes after the commit a state added after the broker’s thread loaded its routes', async () => {
    // The broker's thread shows arrivals with the routes it has loaded, without waiting for a reload
    // after a definition change; the ingest worker's commit does route the new state.
    await t.services.stateEngine.routing();
    const twin = await insertTwin(t, { accountId: tenantA, title: 'Pump C' });
    const pressure = await insertState(
      t,
      twin,
      'pressure',
      { type: 'connector', connectorId: connectorA, deviceId: deviceA, stateKey: 'pressure' },
      { accountId: tenantA },
    );
    t.services.stateEngine.definitionsChanged();
    const client = await connect(tenantAToken);
    client.send({ subscribe: { twinIds: [twin] } });
    expect(await client.next('subscribed')).toMatchObject({ twinIds: [twin], notFound: [] });

    await t.services.packets.append(packet(connectorA, 'meter-a', { pressure: 4.05 }));
    await committed(twin, 'pressure', 4.05);
    const entries = await waitFor(
      async () => {
        const found = client.batches.flat().filter((e) => e.stateId === pressure);
        return found.length > 0 ? found : undefined;
      },
      5000,
      { what: 'the new state pushed' },
    );
    expect(entries.map((e) => e.value)).toEqual([4.05]);
    // Shown once: the next packet's arrival is pushed as before, and nothing twice.
    await t.services.packets.append(packet(connectorA, 'meter-a', { pressure: 4.1 }));
    await committed(twin, 'pressure', 4.1);
    await quietPeriod();
    expect(
      client.batches
        .flat()
        .filter((e) => e.stateId === pressure)
        .map((e) => e.value),
    ).toEqual([4.05, 4.1]);
    client.socket.close();
  });

  it('follows devices and twins from one subscribe message, within one id limit', async () => {
    const client = await connect(adminToken);
    const deviceIds = [deviceA];
    client.send({ subscribe: { deviceIds, twinIds: [twinA, twinB] } });
    expect(await client.next('subscribed')).toEqual({
      type: 'subscribed',
      deviceIds,
      twinIds: [twinA, twinB],
      notFound: [],
    });
    const tooMany = Array.from({ length: 1001 }, () => randomUUID());
    client.send({ subscribe: { deviceIds: tooMany.slice(0, 500), twinIds: tooMany.slice(500) } });
    expect(await client.next('error')).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
    client.send({ subscribe: { twinIds: 'all' } });
    expect(await client.next('error')).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
    client.socket.close();
  });

  it('needs state.read to follow twins and VirtualDevice.read to follow devices', async () => {
    const admin = bearer(adminToken);
    const devicesOnly = await userWithPermissions(t, admin, 'Device watcher', ['VirtualDevice.read'], {
      accountId: tenantA,
    });
    const statesOnly = await userWithPermissions(t, admin, 'State watcher', ['state.read'], {
      accountId: tenantA,
    });
    const neither = await userWithPermissions(t, admin, 'Role reader', ['role.read'], { accountId: tenantA });

    const deviceClient = await connect(devicesOnly.token);
    deviceClient.send({ subscribe: { twinIds: [twinA] } });
    expect(await deviceClient.next('error')).toMatchObject({ error: { code: 'NO_PERMISSION_STATE.READ' } });
    deviceClient.socket.close();

    // A twin-only console may open the socket (it used to need VirtualDevice.read).
    const stateClient = await connect(statesOnly.token);
    stateClient.send({ subscribe: { twinIds: [twinA], deviceIds: [randomUUID()] } });
    expect(await stateClient.next('error')).toMatchObject({
      error: { code: 'NO_PERMISSION_VIRTUALDEVICE.READ' },
    });
    stateClient.send({ subscribe: { twinIds: [twinA] } });
    expect(await stateClient.next('subscribed')).toMatchObject({ twinIds: [twinA] });
    stateClient.socket.close();

    const refused = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(base, ['stellwerk.live.v1', `bearer.${neither.token}`]);
      socket.once('unexpected-response', (_request, response) => {
        resolve(response.statusCode ?? 0);
        socket.terminate();
      });
      socket.once('open', () => reject(new Error('handshake unexpectedly accepted')));
      socket.once('error', () => undefined);
    });
    expect(refused).toBe(403);
  });

  it("applies the twin routes' permission-scope rule (scope inherited from the parent) for scoped users", async () => {
    const admin = caller(t, bearer(adminToken));
    const scopeIn = async (title: string) =>
      expectStatus<{ id: string }>(
        await admin('POST', '/xapi/v1/permission-scopes', { title, accountId: tenantA }),
        201,
      ).id;
    const [hall1, hall2] = [await scopeIn('Hall 1'), await scopeIn('Hall 2')];
    const twinIn = async (body: Record<string, unknown>) =>
      expectStatus<{ id: string }>(
        await admin('POST', '/xapi/v1/digital-twins', { accountId: tenantA, ...body }),
        201,
      ).id;
    const inHall1 = await twinIn({ title: 'Hall 1 pump', permissionScopeId: hall1 });
    const inherits = await twinIn({ title: 'Hall 1 valve', parentId: inHall1 });
    const inHall2 = await twinIn({ title: 'Hall 2 pump', permissionScopeId: hall2 });
    const scoped = await userWithPermissions(t, bearer(adminToken), 'Hall 1 watcher', ['digitalTwin.read'], {
      accountId: tenantA,
      permissionScopeIds: [hall1],
    });

    const client = await connect(scoped.token);
    const asked = [twinA, twinB, inHall1, inherits, inHall2];
    client.send({ subscribe: { twinIds: asked } });
    const reply = await client.next('subscribed');
    expect(reply).toMatchObject({ twinIds: [inHall1, inherits], notFound: [twinA, twinB, inHall2] });
    // Exactly the twins the same user can read through the twin routes.
    const readable: string[] = [];
    for (const id of asked)
      if ((await caller(t, bearer(scoped.token))('GET', `/xapi/v1/digital-twins/${id}`)).statusCode === 200)
        readable.push(id);
    expect(readable).toEqual(reply.twinIds);
    client.socket.close();
  });
});

describe('live push when visibility changes', () => {
  it('stops pushing a twin that left the subscriber’s scopes, and one hidden by a change of the user’s scopes', async () => {
    const admin = caller(t, bearer(adminToken));
    const scopeIn = async (title: string) =>
      expectStatus<{ id: string }>(
        await admin('POST', '/xapi/v1/permission-scopes', { title, accountId: tenantA }),
        201,
      ).id;
    const [east, west] = [await scopeIn('East'), await scopeIn('West')];
    const twinWithState = async (title: string, permissionScopeId: string) => {
      const id = expectStatus<{ id: string }>(
        await admin('POST', '/xapi/v1/digital-twins', { accountId: tenantA, title, permissionScopeId }),
        201,
      ).id;
      const stateId = expectStatus<{ id: string }>(
        await admin('POST', `/xapi/v1/digital-twins/${id}/states`, { key: 'level', valueType: 'number' }),
        201,
      ).id;
      return { id, stateId };
    };
    const moving = await twinWithState('East tank', east);
    const staying = await twinWithState('East silo', east);
    const watcher = await userWithPermissions(t, bearer(adminToken), 'East watcher', ['digitalTwin.read'], {
      accountId: tenantA,
      permissionScopeIds: [east],
    });
    const client = await connect(watcher.token);
    client.send({ subscribe: { twinIds: [moving.id, staying.id] } });
    expect(await client.next('subscribed')).toMatchObject({ twinIds: [moving.id, staying.id], notFound: [] });
    const pushed = (stateId: string) => client.batches.flat().filter((e) => e.stateId === stateId);

    // The twin moves to the west: it is dropped at once, and its values are no longer pushed.
    expectStatus(await admin('PUT', `/xapi/v1/digital-twins/${moving.id}`, { permissionScopeId: west }), 200);
    expect(await client.next('unsubscribed')).toEqual({
      type: 'unsubscribed',
      deviceIds: [],
      twinIds: [moving.id],
      reason: 'notVisible',
    });
    expectStatus(await admin('PUT', `/xapi/v1/states/${moving.stateId}`, { value: 7 }), 200);
    expectStatus(await admin('PUT', `/xapi/v1/states/${staying.stateId}`, { value: 8 }), 200);
    await waitFor(async () => (pushed(staying.stateId).length > 0 ? true : undefined), 5000, {
      what: 'the silo’s value',
    });
    await quietPeriod();
    expect(pushed(moving.stateId)).toEqual([]);

    // The watcher is moved to the west: by the next re-check the silo is dropped too.
    expectStatus(await admin('PUT', `/xapi/v1/users/${watcher.id}`, { permissionScopeIds: [west] }), 200);
    await (t.services.live as unknown as { housekeeping(): Promise<void> }).housekeeping();
    expect(await client.next('unsubscribed')).toMatchObject({ twinIds: [staying.id], reason: 'notVisible' });
    expectStatus(await admin('PUT', `/xapi/v1/states/${staying.stateId}`, { value: 9 }), 200);
    await quietPeriod();
    expect(pushed(staying.stateId).map((e) => e.value)).toEqual([8]);
    client.socket.close();
  });
});
