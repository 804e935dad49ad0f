import net from 'node:net';
import fs from 'node:fs/promises';
import mqtt from 'mqtt';
import WebSocket from 'ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase } from './support/database.js';
import {
  killSpawnedServers,
  startServer,
  tempDataDir,
  type ServerProcess,
} from './support/server-process.js';
import { waitFor } from './support/wait.js';

/**
 * The broker's cap on sockets, derived from the open-file limit: a real server process started with
 * a soft limit of 256 and a hard limit of 1,024 (Node raises the soft one to 1,024) and 1,016
 * descriptors reserved for everything else, so the broker holds 8 sockets at most. Sockets beyond
 * it are closed as they arrive (with or without a CONNECT, TCP or WebSocket), while the HTTP API and
 * PostgreSQL keep working, and health reports the limit.
 */

const ADMIN = { email: 'cap@stellwerk.test', password: 'cap password 12345' };
let db: { url: string; drop: () => Promise<void> };
let dataDir: string;
let server: ServerProcess;
let mqttPort: number;
const sockets: net.Socket[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await tempDataDir('stellwerk-cap-');
  const probe = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => probe.once('listening', resolve));
  mqttPort = (probe.address() as net.AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  server = await startServer(
    {
      DATABASE_URL: db.url,
      STELLWERK_DATA_DIR: dataDir,
      STELLWERK_ADMIN_EMAIL: ADMIN.email,
      STELLWERK_ADMIN_PASSWORD: ADMIN.password,
      STELLWERK_MQTT_PORT: String(mqttPort),
      STELLWERK_MQTT_RESERVED_FILES: '1016',
      // Sockets without CONNECT stay for the whole test unless the cap closes them.
      STELLWERK_MQTT_CONNECT_TIMEOUT_MS: '60000',
    },
    120_000,
    { openFiles: { soft: 256, hard: 1024 } },
  );
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  killSpawnedServers();
  await db?.drop();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

/** A metric's value from /metrics (every line carries the node label, and `label` when given). */
const metric = async (name: string, label = '') => {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(label));
  return Number(line?.split(' ').pop() ?? NaN);
};

/** A raw TCP connection that sends nothing; `closed` resolves with the ms until the broker closed it. */
function rawSocket() {
  const socket = net.connect(mqttPort, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => undefined);
  const started = Date.now();
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - started)));
  return { socket, closed };
}

it('reports the open-file limit Node raised to the hard limit, and caps the broker 1,016 below it', async () => {
  const health = (await (await fetch(`${server.baseUrl}/xapi/v1/health`)).json()) as {
    status: string;
    openFiles: unknown;
  };
  expect(health).toMatchObject({ status: 'ok', openFiles: { soft: 1024, hard: 1024 } });
  expect(await metric('stellwerk_broker_connection_cap')).toBe(8);
});

it('closes sockets beyond the cap at once, keeps the API and database working, and takes new ones when freed', async () => {
  const held = Array.from({ length: 8 }, () => rawSocket());
  await waitFor(async () => ((await metric('stellwerk_broker_sockets')) === 8 ? true : undefined));
  const over = Array.from({ length: 5 }, () => rawSocket());
  for (const { closed } of over) expect(await closed).toBeLessThan(5000);
  // MQTT over WebSocket counts against the same cap.
  const ws = new WebSocket(`ws://127.0.0.1:${server.httpPort}/mqtt`, ['mqtt']);
  ws.on('error', () => undefined);
  await new Promise((resolve) => ws.once('close', resolve));
  expect(await metric('stellwerk_broker_connections_closed_total', 'reason="over-capacity"')).toBe(6);
  expect(server.output()).toContain("the broker's cap of 8 sockets is reached");

  // The rest of the server has its descriptors: a login, a new connector (database writes), health.
  const login = await fetch(`${server.baseUrl}/xapi/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  expect(login.status).toBe(200);
  const { token } = (await login.json()) as { token: string };
  const created = await fetch(`${server.baseUrl}/xapi/v1/connectors`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ type: 'mqtt-broker', title: 'after the flood' }),
  });
  expect(created.status).toBe(201);
  const connector = (await created.json()) as {
    id: string;
    credentials: { username: string; password: string };
  };
  expect((await fetch(`${server.baseUrl}/xapi/v1/health`)).status).toBe(200);

  // A freed slot is taken by a real client, which publishes with QoS 1.
  held[0]!.socket.destroy();
  await held[0]!.closed;
  await waitFor(async () => ((await metric('stellwerk_broker_sockets')) === 7 ? true : undefined));
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${mqttPort}`, {
    ...connector.credentials,
    reconnectPeriod: 0,
  });
  await client.publishAsync(`connectors/${connector.id}/devices/d1/up`, '{"ok":true}', { qos: 1 });
  await client.endAsync();
});
