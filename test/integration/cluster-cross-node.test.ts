import { once } from 'node:events';
import net from 'node:net';
import mqtt from 'mqtt';
import mqttPacket from 'mqtt-packet';
import pg from 'pg';
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

/**
 * A client on a raw socket that chooses its PUBLISH packet ids and DUP flag, as a device resending
 * its unacknowledged messages after a reconnect does (mqtt.js picks its own ids).
 */
async function rawSession(node: ClusterNode, clientId: string) {
  const socket = net.connect(node.ports.mqtt, '127.0.0.1');
  socket.on('error', () => undefined);
  // Packets from the broker not yet taken by an expectation, in arrival order.
  const parser = mqttPacket.parser();
  const received: mqttPacket.Packet[] = [];
  parser.on('packet', (packet) => received.push(packet));
  socket.on('data', (data: Buffer) => parser.parse(data));
  const expectPacket = async (matches: (p: mqttPacket.Packet) => boolean, what: string) => {
    const signal = AbortSignal.timeout(10_000);
    for (;;) {
      const at = received.findIndex(matches);
      if (at >= 0) return received.splice(at, 1)[0]!;
      await once(parser, 'packet', { signal }).catch(() => {
        throw new Error(`no ${what} from ${node.name}`);
      });
    }
  };
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  const { username, password } = connector.credentials;
  socket.write(
    mqttPacket.generate({
      cmd: 'connect',
      protocolId: 'MQTT',
      protocolVersion: 4,
      clean: true,
      clientId,
      keepalive: 60,
      username,
      password: Buffer.from(password),
    }),
  );
  const connack = await expectPacket((p) => p.cmd === 'connack', 'CONNACK');
  if (connack.cmd !== 'connack' || connack.returnCode !== 0)
    throw new Error(`${node.name} refused ${clientId}`);
  return {
    /** Resolves on the PUBACK of `packetId`. */
    publish: async (topic: string, payload: string, packetId: number, dup: boolean) => {
      socket.write(
        mqttPacket.generate({
          cmd: 'publish',
          topic,
          payload,
          qos: 1,
          dup,
          retain: false,
          messageId: packetId,
        }),
      );
      await expectPacket((p) => p.cmd === 'puback' && p.messageId === packetId, `PUBACK ${packetId}`);
    },
    close: () => socket.destroy(),
  };
}

async function resendsSkipped(node: ClusterNode): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${node.ports.http}/metrics`)).text();
  return Number(/^stellwerk_broker_resends_skipped_total (\d+)/m.exec(text)?.[1] ?? NaN);
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

  it('acknowledges a message resent to another node after a reconnect without storing it again', async () => {
    const [one, two] = [nodes[0]!, nodes[1]!];
    const topic = `connectors/${connector.id}/devices/meter-1/up`;
    const sent = JSON.stringify({ resent: Date.now() });
    const skippedBefore = await resendsSkipped(two);
    // Acknowledged by node 1 once committed; the device then loses its connection before it saw
    // the PUBACK (as far as it knows), reconnects through the load balancer to node 2 and resends.
    const first = await rawSession(one, 'meter-1-resender');
    await first.publish(topic, sent, 17, false);
    first.close();
    const second = await rawSession(two, 'meter-1-resender');
    await second.publish(topic, sent, 17, true);
    // The same packet id with another payload is a new message, stored.
    const next = JSON.stringify({ resent: 'a new reading' });
    await second.publish(topic, next, 17, true);
    second.close();

    const sql = new pg.Client({ connectionString: db!.url });
    await sql.connect();
    try {
      const stored = async (payload: string) =>
        Number(
          (
            await sql.query<{ n: string }>(
              'SELECT count(*) AS n FROM packets WHERE connector_id = $1 AND payload = $2',
              [connector.id, Buffer.from(payload)],
            )
          ).rows[0]!.n,
        );
      expect(await stored(sent)).toBe(1);
      expect(await stored(next)).toBe(1);
    } finally {
      await sql.end();
    }
    expect(await resendsSkipped(two)).toBe(skippedBefore + 1);
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
