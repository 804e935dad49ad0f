import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { createConnector, packetsOf, type ConnectorBody } from './support/connectors.js';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { freePort, makePki } from './support/mosquitto.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';
import { disconnectedRule } from './support/link-monitoring.js';

/**
 * The websocket kind against a real `ws` server on loopback: headers and bearer token in the
 * handshake, the subscribe message, JSON messages to device states with `_meta.frame`, a message
 * that is no JSON, downlinks, pings both ways, and the server going away and coming back.
 */

const TOKEN = 'feed token 7';

interface Peer {
  server: WebSocketServer;
  clients: WebSocket[];
  received: string[];
  handshakes: IncomingHttpHeaders[];
}

async function startPeer(port: number): Promise<Peer> {
  const peer: Peer = { server: undefined as never, clients: [], received: [], handshakes: [] };
  peer.server = new WebSocketServer({
    port,
    host: '127.0.0.1',
    verifyClient: (info, done) => done(info.req.headers.authorization === `Bearer ${TOKEN}`, 401),
  });
  peer.server.on('connection', (socket, request) => {
    peer.clients.push(socket);
    peer.handshakes.push(request.headers);
    socket.on('message', (data: Buffer) => peer.received.push(data.toString()));
  });
  await once(peer.server, 'listening');
  return peer;
}

async function stopPeer(peer: Peer): Promise<void> {
  for (const client of peer.server.clients) client.terminate();
  await new Promise<void>((resolve) => peer.server.close(() => resolve()));
}

let t: TestApp;
let call: ReturnType<typeof caller>;
let port: number;
let peer: Peer;
let connector: ConnectorBody;
let deviceId: string;

const logs = async (id: string) =>
  expectStatus<{ data: Array<{ level: string; message: string }> }>(
    await call('GET', `/xapi/v1/connectors/${id}/logs?pageSize=100`),
    200,
  ).data.map((l) => `${l.level}: ${l.message}`);

const logged = (id: string, pattern: RegExp) =>
  waitFor(async () => ((await logs(id)).some((m) => pattern.test(m)) ? true : undefined), 10_000, {
    what: `a log line like ${pattern}`,
  });

const states = async () =>
  Object.fromEntries(
    expectStatus<{ data: Array<{ key: string; value: unknown }> }>(
      await call('GET', `/xapi/v1/virtual-devices/${deviceId}/states`),
      200,
    ).data.map((s) => [s.key, s.value]),
  );

const stateIs = (key: string, value: unknown) =>
  waitFor(async () => ((await states())[key] === value ? true : undefined), 10_000, {
    what: `state ${key} = ${String(value)}`,
  });

/** The newest connection of the peer, once the connector opened it and subscribed. */
const subscribed = (count: number) =>
  waitFor(
    async () =>
      peer.clients.length >= count && peer.received.filter((m) => m.includes('subscribe')).length >= count
        ? peer.clients[count - 1]
        : undefined,
    15_000,
    { what: `subscription ${count}` },
  );

beforeAll(async () => {
  t = await createTestApp();
  call = caller(t, bearer(await login(t)));
  port = await freePort();
  peer = await startPeer(port);
  const driverId = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/device-drivers', { title: 'meter json', parser: { type: 'json' } }),
    201,
  ).id;
  connector = await createConnector(t, bearer(await login(t)), {
    type: 'websocket',
    config: {
      url: `ws://127.0.0.1:${port}/feed?site=7`,
      headers: { 'x-site': 'north' },
      bearerToken: TOKEN,
      subscribeMessage: '{"action":"subscribe","topic":"meters"}',
      deviceIdPointer: '/meter',
      pingIntervalSeconds: 1,
    },
  });
  deviceId = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/virtual-devices', {
      title: 'meter 1',
      device_id: 'm-1',
      connectorId: connector.id,
      deviceDriverId: driverId,
    }),
    201,
  ).id;
}, 60_000);

afterAll(async () => {
  await t?.services.downlinkQueue.stop();
  if (connector) await call('POST', `/xapi/v1/connectors/${connector.id}/deactivate`);
  await t?.close();
  if (peer) await stopPeer(peer);
});

describe('websocket connector', () => {
  it('connects with its headers and bearer token, subscribes, and stores messages as device states', async () => {
    expect(connector.config.bearerToken).toBe('********');
    const socket = await subscribed(1);
    expect(peer.handshakes[0]).toMatchObject({ authorization: `Bearer ${TOKEN}`, 'x-site': 'north' });
    socket.send(JSON.stringify({ meter: 'm-1', kWh: 12.5 }));
    await stateIs('kWh', 12.5);
    expect((await states())['_meta.frame']).toBe('text');
    // The token stays out of the log: the target is logged without its query.
    expect(await logs(connector.id)).toContain(`info: Connected to ws://127.0.0.1:${port}/feed`);
  });

  it('answers the server’s pings', async () => {
    const socket = peer.clients[0]!;
    const pong = once(socket, 'pong');
    socket.ping('are you there');
    expect(String((await pong)[0])).toBe('are you there');
  });

  it('logs a message that is no JSON and keeps the connection', async () => {
    const socket = peer.clients[0]!;
    socket.send('temperature=21');
    socket.send(Buffer.from(JSON.stringify([{ meter: 'm-1', kWh: 13 }])), { binary: true });
    await stateIs('kWh', 13);
    expect((await states())['_meta.frame']).toBe('binary');
    expect(await logs(connector.id)).toContain('warn: Message dropped: The message is not JSON (14 bytes)');
    expect(peer.clients).toHaveLength(1);
  });

  it('sends a downlink as a JSON message with the device id at the pointer', async () => {
    await t.services.downlinkQueue.start();
    const hex = Buffer.from('{"relay":"on"}').toString('hex');
    expectStatus(
      await call('POST', `/xapi/v1/virtual-devices/${deviceId}/downlinks`, { fPort: 1, bytes: hex }),
      202,
    );
    const sent = await waitFor(async () => peer.received.find((m) => m.includes('relay')), 10_000, {
      what: 'the downlink at the peer',
    });
    expect(JSON.parse(sent)).toEqual({ relay: 'on', meter: 'm-1' });
  });

  it('logs the loss when the server goes away, fires a status-duration rule, reconnects and duplicates nothing', async () => {
    const ruleId = await disconnectedRule(call, connector.id, 1);
    const evaluate = async (atMs: number) =>
      (await t.services.monitoringEvaluator.evaluate(new Date(atMs))).map((f) => f.ruleId);
    expect(await evaluate(Date.now())).not.toContain(ruleId);
    await stopPeer(peer);
    await logged(connector.id, /^warn: Disconnected from ws:\/\/127\.0\.0\.1:\d+\/feed: the server closed/);
    const down = Date.now();
    expect(await evaluate(down)).not.toContain(ruleId);
    expect(await evaluate(down + 2000)).toContain(ruleId);

    peer = await startPeer(port);
    const socket = await subscribed(1);
    socket.send(JSON.stringify({ meter: 'm-1', kWh: 14 }));
    await stateIs('kWh', 14);
    const keys = (await packetsOf(t, connector.id)).map(
      (p) => JSON.parse(p.payload.toString()) as { kWh: number },
    );
    expect(keys.map((p) => p.kWh)).toEqual([12.5, 13, 14]);
  });

  it('drops a server that stops answering pings, and connects again', async () => {
    const socket = peer.clients[0]!;
    // A paused socket reads nothing, so the connector's pings get no pong.
    (socket as unknown as { _socket: { pause(): void } })._socket.pause();
    await logged(connector.id, /^warn: Disconnected from .*: no pong within 1 s$/);
    await waitFor(async () => (peer.clients.length >= 2 ? true : undefined), 10_000, { what: 'reconnect' });
  });

  it('logs an upgrade the server refuses', async () => {
    const refused = await createConnector(t, bearer(await login(t)), {
      type: 'websocket',
      config: { url: `ws://127.0.0.1:${port}/feed`, bearerToken: 'wrong', deviceId: 'x' },
    });
    await logged(refused.id, /^error: The server refused the WebSocket upgrade with HTTP 401$/);
    expectStatus(await call('POST', `/xapi/v1/connectors/${refused.id}/deactivate`), 200);
  });

  it('connects to wss:// with a custom CA and a client certificate, and passes binary messages on', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'stellwerk-ws-pki-'));
    const pki = await makePki(dir);
    const pem = {
      ca: await readFile(pki.ca, 'utf8'),
      cert: await readFile(pki.clientCert, 'utf8'),
      key: await readFile(pki.clientKey, 'utf8'),
    };
    const server = https.createServer({
      cert: await readFile(pki.serverCert),
      key: await readFile(pki.serverKey),
      ca: pem.ca,
      requestCert: true,
      rejectUnauthorized: true,
    });
    const secure = new WebSocketServer({ server });
    const clients: string[] = [];
    secure.on('connection', (socket, request) => {
      clients.push((request.socket as TLSSocket).getPeerCertificate().subject.CN as string);
      socket.send(Buffer.from([0x01, 0xff, 0x00]), { binary: true });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const tls = await createConnector(t, bearer(await login(t)), {
        type: 'websocket',
        config: {
          url: `wss://127.0.0.1:${(server.address() as { port: number }).port}/secure`,
          serverCa: pem.ca,
          clientCert: pem.cert,
          clientKey: pem.key,
          messages: 'any',
          deviceId: 'plc-7',
        },
      });
      const packet = await waitFor(async () => (await packetsOf(t, tls.id))[0], 15_000, {
        what: 'the packet',
      });
      expect(packet.device_key).toBe('plc-7');
      expect([...packet.payload]).toEqual([0x01, 0xff, 0x00]);
      expect(packet.meta).toEqual({ fields: { frame: 'binary' } });
      expect(clients).toEqual(['stellwerk-client']);
      expectStatus(await call('POST', `/xapi/v1/connectors/${tls.id}/deactivate`), 200);
    } finally {
      for (const client of secure.clients) client.terminate();
      server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
