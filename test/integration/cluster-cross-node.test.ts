import mqtt from 'mqtt';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterNode, startRedis, type ClusterNode, type Redis } from './support/cluster.js';
import { createTestDatabase } from './support/database.js';
import { killSpawnedServers } from './support/server-process.js';
import { waitFor } from './support/wait.js';

/**
 * Three nodes on one database and one Redis: what happens on one node is seen on the others at once
 * (live views, broker messages, deactivations, client-id takeover).
 */

const ADMIN = { email: 'cluster@stellwerk.test', password: 'cluster cross-node password' };

let redis: Redis | undefined;
let db: { url: string; drop: () => Promise<void> } | undefined;
const nodes: ClusterNode[] = [];
let token = '';
let connector: { id: string; credentials: { username: string; password: string } };
let deviceId = '';

async function api<T>(node: ClusterNode, path: string, method = 'GET', body?: unknown): Promise<T> {
  const response = await fetch(`http://127.0.0.1:${node.ports.http}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** An MQTT client of the test connector on a node's port; no reconnects, so a close stays visible. */
async function brokerClient(node: ClusterNode, clientId: string) {
  const client = mqtt.connect(`mqtt://127.0.0.1:${node.ports.mqtt}`, {
    clientId,
    username: connector.credentials.username,
    password: connector.credentials.password,
    reconnectPeriod: 0,
    connectTimeout: 5000,
  });
  client.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('close', () => reject(new Error(`${clientId} could not connect to ${node.name}`)));
  });
  let closed = false;
  client.on('close', () => (closed = true));
  return { client, closed: () => closed };
}

beforeAll(async () => {
  redis = await startRedis();
  db = await createTestDatabase();
  for (const name of ['node-1', 'node-2', 'node-3']) {
    nodes.push(
      await clusterNode(name, {
        databaseUrl: db.url,
        redisUrl: redis.url,
        env: { STELLWERK_ADMIN_EMAIL: ADMIN.email, STELLWERK_ADMIN_PASSWORD: ADMIN.password },
      }),
    );
  }
  // The first creates the administrator; the others then start side by side.
  await nodes[0]!.start();
  await Promise.all(nodes.slice(1).map((n) => n.start()));
  token = (await api<{ token: string }>(nodes[0]!, '/xapi/v1/auth/login', 'POST', ADMIN)).token;
  connector = await api(nodes[0]!, '/xapi/v1/connectors', 'POST', { title: 'cluster', type: 'mqtt-broker' });
  const device = await api<{ id: string }>(nodes[0]!, '/xapi/v1/virtual-devices', 'POST', {
    device_id: 'meter-1',
    title: 'Meter 1',
    connectorId: connector.id,
  });
  deviceId = device.id;
}, 120_000);

afterAll(async () => {
  killSpawnedServers();
  await redis?.stop();
  await db?.drop();
});

describe('a cluster of three nodes', () => {
  it('shows a device publishing to node 1 in a console following it on node 2', async () => {
    const [one, two] = [nodes[0]!, nodes[1]!];
    const socket = new WebSocket(`ws://127.0.0.1:${two.ports.http}/xapi/v1/live`, [
      'stellwerk.live.v1',
      `bearer.${token}`,
    ]);
    const messages: Array<Record<string, unknown>> = [];
    socket.on('message', (data: Buffer) =>
      messages.push(JSON.parse(data.toString('utf8')) as Record<string, unknown>),
    );
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    socket.send(JSON.stringify({ subscribe: { deviceIds: [deviceId] } }));
    await waitFor(async () => messages.find((m) => m.type === 'subscribed'), 10_000, { what: 'subscribed' });

    const { client } = await brokerClient(one, 'meter-1-uplink');
    await client.publishAsync(`connectors/${connector.id}/devices/meter-1/up`, '{"temperature":21.5}', {
      qos: 1,
    });
    const packets = await waitFor(
      async () => {
        const entries = messages
          .filter((m) => m.type === 'packets')
          .flatMap((m) => m.packets as Array<{ deviceId: string; states: Record<string, unknown> }>);
        return entries.length > 0 ? entries : undefined;
      },
      15_000,
      { what: 'the packet on node 2' },
    );
    expect(packets[0]).toMatchObject({ deviceId });
    expect(JSON.stringify(packets[0]!.states)).toContain('21.5');
    await client.endAsync();
    socket.close();
  });

  it('delivers a downlink sent through node 1 to a subscriber on node 3', async () => {
    const [one, three] = [nodes[0]!, nodes[2]!];
    const { client } = await brokerClient(three, 'meter-1-downlink');
    const received: string[] = [];
    client.on('message', (_topic, payload: Buffer) => received.push(payload.toString('hex')));
    await client.subscribeAsync(`connectors/${connector.id}/devices/meter-1/down`, { qos: 1 });
    for (const bytes of ['0a0b', '0c0d'])
      await api(one, `/xapi/v1/virtual-devices/${deviceId}/downlinks`, 'POST', { fPort: 5, bytes });
    await waitFor(async () => (received.length >= 2 ? true : undefined), 15_000, {
      what: 'both downlinks on node 3',
    });
    expect(received.sort()).toEqual(['0a0b', '0c0d']);
    await client.endAsync();
  });

  it('closes the session on node 1 when the same client id connects on node 2', async () => {
    const first = await brokerClient(nodes[0]!, 'meter-1-takeover');
    const second = await brokerClient(nodes[1]!, 'meter-1-takeover');
    await waitFor(async () => (first.closed() ? true : undefined), 10_000, {
      what: 'the takeover on node 1',
    });
    expect(second.closed()).toBe(false);
    await second.client.endAsync();
  });

  it('disconnects the clients on node 2 of a connector deactivated through node 1', async () => {
    const onTwo = await brokerClient(nodes[1]!, 'meter-1-deactivation');
    await new Promise((r) => setTimeout(r, 300));
    expect(onTwo.closed()).toBe(false);
    await api(nodes[0]!, `/xapi/v1/connectors/${connector.id}/deactivate`, 'POST');
    await waitFor(async () => (onTwo.closed() ? true : undefined), 5_000, {
      what: 'the disconnect on node 2',
    });
  });
});
