import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { bearer, createUser } from './support/auth.js';
import {
  insertConnector,
  insertDevice,
  insertDriver,
  packet,
  processedPackets,
} from './support/ingest-fixtures.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, type TestApp } from './support/test-app.js';

let t: TestApp;
let base: string;
let adminToken: string;
let connectorId: string;
let rootDevice: string;
let childDevice: string;
let childToken: string;

interface Message {
  type: string;
  [key: string]: unknown;
}

let appended = 0;
/** Appends a packet of the test's connector, counting them: `processedPackets(…, appended)` waits for all. */
const append = (deviceKey: string, payload: unknown) => {
  appended++;
  return t.services.packets.append(packet(connectorId, deviceKey, payload));
};

/** A WebSocket client that collects every message. */
async function connect(url: string, options: WebSocket.ClientOptions & { protocols?: string[] } = {}) {
  const socket = new WebSocket(url, options.protocols ?? [], options);
  const messages: Message[] = [];
  const batches: Message[][] = [];
  // A `packets` message carries a batch; the tests look at its entries one by one as `packet`s.
  socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString('utf8')) as Message;
    if (message.type !== 'packets') return messages.push(message);
    const entries = message.packets as Message[];
    batches.push(entries);
    for (const entry of entries) messages.push({ ...entry, type: 'packet' });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const next = async (type: string, timeoutMs = 5000): Promise<Message> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = messages.findIndex((m) => m.type === type);
      if (index >= 0) return messages.splice(index, 1)[0]!;
      if (Date.now() > deadline) throw new Error(`no ${type} message; got ${JSON.stringify(messages)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { socket, messages, batches, next };
}

/** The HTTP status a refused handshake answered with. */
function refusal(url: string, options: WebSocket.ClientOptions = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, options);
    socket.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.once('open', () => reject(new Error('handshake unexpectedly accepted')));
    socket.once('error', () => undefined);
  });
}

beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  base = `ws://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/xapi/v1/live`;
  const login = await t.app.inject({
    method: 'POST',
    url: '/xapi/v1/auth/login',
    payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
  });
  adminToken = login.json<{ token: string }>().token;
  const child = await t.app.inject({
    method: 'POST',
    url: '/xapi/v1/accounts',
    headers: { authorization: `Bearer ${adminToken}` },
    payload: { title: 'Child' },
  });
  const childAccountId = child.json<{ id: string }>().id;
  await createUser(t, 'child-admin@stellwerk.test', { accountId: childAccountId });
  childToken = await bearer(t, 'child-admin@stellwerk.test');
  const driverId = await insertDriver(t);
  connectorId = await insertConnector(t);
  rootDevice = await insertDevice(t, { connectorId, deviceKey: 'root-dev', driverId });
  childDevice = await insertDevice(t, {
    connectorId,
    deviceKey: 'child-dev',
    driverId,
    accountId: childAccountId,
  });
});
afterAll(() => t?.close());

describe('live push', () => {
  it('answers a plain GET with 426 and refuses a handshake without credentials', async () => {
    const plain = await t.app.inject({
      url: '/xapi/v1/live',
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(plain.statusCode).toBe(426);
    expect(plain.json<{ error: { code: string } }>().error.code).toBe('UPGRADE_REQUIRED');
    expect(await refusal(base)).toBe(401);
    expect(await refusal(`${base}?token=not-a-token`)).toBe(401);
  });

  it('pushes parsed packets of subscribed devices (token as subprotocol)', async () => {
    const client = await connect(base, { protocols: ['stellwerk.live.v1', `bearer.${adminToken}`] });
    expect(client.socket.protocol).toBe('stellwerk.live.v1');
    client.socket.send(JSON.stringify({ subscribe: { deviceIds: [rootDevice] } }));
    expect(await client.next('subscribed')).toMatchObject({ deviceIds: [rootDevice], notFound: [] });
    await append('root-dev', { temperature: 19.5 });
    const pushed = await client.next('packet');
    expect(pushed).toMatchObject({
      deviceId: rootDevice,
      states: { temperature: 19.5, _parsed: { temperature: 19.5 }, _raw: '{"temperature":19.5}' },
    });
    expect(new Date(pushed.receivedAt as string).getTime()).toBeGreaterThan(Date.now() - 60_000);
    client.socket.send(JSON.stringify({ unsubscribe: { deviceIds: [rootDevice] } }));
    await client.next('unsubscribed');
    await append('root-dev', { temperature: 20 });
    await new Promise((r) => setTimeout(r, 300));
    expect(client.messages.filter((m) => m.type === 'packet')).toEqual([]);
    client.socket.close();
  });

  it('reports devices as consoles start following them, once each (the live view preloads them)', async () => {
    const followed: string[][] = [];
    t.services.live.onDevicesFollowed((ids) => followed.push(ids));
    const first = await connect(base, { protocols: ['stellwerk.live.v1', `bearer.${adminToken}`] });
    const second = await connect(base, { protocols: ['stellwerk.live.v1', `bearer.${adminToken}`] });
    for (const client of [first, second]) {
      client.socket.send(JSON.stringify({ subscribe: { deviceIds: [rootDevice, childDevice] } }));
      await client.next('subscribed');
    }
    expect(followed).toEqual([[rootDevice, childDevice]]);
    first.socket.close();
    second.socket.close();
  });

  it('sends the updates of one step as one batch, in packet order', async () => {
    const client = await connect(base, { protocols: ['stellwerk.live.v1', `bearer.${adminToken}`] });
    client.socket.send(JSON.stringify({ subscribe: { deviceIds: [rootDevice] } }));
    await client.next('subscribed');
    await append('root-dev', [{ n: 1 }, { n: 2 }, { n: 3 }]);
    await client.next('packet');
    // After the commit too, the step was pushed once, as one batch (ADR 0104: the worker pushes only
    // what the live view did not show on arrival).
    await processedPackets(t, connectorId, appended);
    const steps = client.batches
      .map((batch) => batch.map((p) => (p.states as { n?: number }).n))
      .filter((ns) => ns.some((n) => n !== undefined));
    expect(steps).toEqual([[1, 2, 3]]);
    client.socket.close();
  });

  it('pushes each packet once: on arrival, or after its commit when its parser runs user code', async () => {
    const scriptDriver = await insertDriver(t, {
      type: 'javascript',
      code: 'function parse(bytes) { return { level: bytes[0] }; }',
    });
    const scripted = await insertDevice(t, { connectorId, deviceKey: 'script-dev', driverId: scriptDriver });
    const client = await connect(base, { protocols: ['stellwerk.live.v1', `bearer.${adminToken}`] });
    client.socket.send(JSON.stringify({ subscribe: { deviceIds: [rootDevice, scripted] } }));
    await client.next('subscribed');
    await append('root-dev', { once: 1 });
    await append('script-dev', Buffer.from([7]));
    await processedPackets(t, connectorId, appended);
    await expect.poll(() => client.messages.filter((m) => m.type === 'packet').length).toBe(2);
    // Nothing more arrives: neither packet is pushed a second time.
    await new Promise((r) => setTimeout(r, 300));
    const pushed = client.messages.filter((m) => m.type === 'packet');
    expect(pushed.map((m) => [m.deviceId, (m.states as Record<string, unknown>)._parsed])).toEqual(
      expect.arrayContaining([
        [rootDevice, { once: 1 }],
        [scripted, { level: 7 }],
      ]),
    );
    expect(pushed).toHaveLength(2);
    client.socket.close();
  });

  it('lets a sub-account user follow its own devices only', async () => {
    const client = await connect(`${base}?token=${childToken}`);
    client.socket.send(JSON.stringify({ subscribe: { deviceIds: [rootDevice, childDevice] } }));
    expect(await client.next('subscribed')).toMatchObject({
      deviceIds: [childDevice],
      notFound: [rootDevice],
    });
    await append('root-dev', { secret: 1 });
    await append('child-dev', { open: 2 });
    const pushed = await client.next('packet');
    expect(pushed.deviceId).toBe(childDevice);
    await new Promise((r) => setTimeout(r, 200));
    expect(client.messages.filter((m) => m.type === 'packet')).toEqual([]);
    client.socket.close();
  });

  it('accepts the Authorization header and answers bad messages with an error, keeping the socket', async () => {
    const client = await connect(base, { headers: { authorization: `Bearer ${adminToken}` } });
    client.socket.send('not json');
    expect(await client.next('error')).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
    client.socket.send(JSON.stringify({ subscribe: { deviceIds: ['nope'] } }));
    expect(await client.next('error')).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
    client.socket.send(JSON.stringify({ subscribe: { deviceIds: [childDevice] } }));
    expect(await client.next('subscribed')).toMatchObject({ deviceIds: [childDevice] });
    client.socket.close();
  });

  it('takes the console cookie from the public URL or the host it was served under, never a foreign origin', async () => {
    const cookie = `__Host-stellwerk_session=${adminToken}`;
    expect(await refusal(base, { headers: { cookie, origin: 'https://evil.example' } })).toBe(403);
    // A page of another site that names this server's host only in its path or user part is still foreign.
    const host = new URL(base.replace(/^ws/, 'http')).host;
    expect(await refusal(base, { headers: { cookie, origin: `https://evil.example/${host}` } })).toBe(403);
    const viaPublicUrl = await connect(base, {
      headers: { cookie, origin: new URL(t.config.publicUrl).origin },
    });
    viaPublicUrl.socket.close();
    // The console opened by address (http://<ip>:<port>) rather than the configured public URL.
    const viaHost = await connect(base, { headers: { cookie, origin: `http://${host}` } });
    viaHost.socket.close();
  });

  it('closes the socket once the session is revoked', async () => {
    const token = await bearer(t, 'child-admin@stellwerk.test');
    const client = await connect(`${base}?token=${token}`);
    const closed = new Promise<number>((resolve) => client.socket.once('close', (code) => resolve(code)));
    await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/auth/logout',
      headers: { authorization: `Bearer ${token}` },
    });
    await (t.services.live as unknown as { housekeeping(): Promise<void> }).housekeeping();
    expect(await closed).toBe(4401);
  });
});
