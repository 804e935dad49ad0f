import mqtt from 'mqtt';
import pg from 'pg';
import {
  clusterNode,
  startHaproxy,
  startRedis,
  type ClusterNode,
  type Haproxy,
  type Redis,
} from './cluster.js';
import { createTestDatabase } from './database.js';
import { killSpawnedServers } from './server-process.js';

/**
 * The site of the cluster-mode tests: an mqtt-broker connector, a JSON driver, `count` devices, each
 * routed (referenceId) to a twin with one number state `v`, so every `{"v": n}` message is one packet,
 * one twin state change and one time-series point. Connector and login through the XAPI; devices, twins
 * and states straight into the tables (hundreds of XAPI calls would dominate the test's time); the
 * nodes read them after a restart or through their cache misses.
 */

export const CLUSTER_ADMIN = { email: 'cluster@stellwerk.test', password: 'three nodes one plant' };

export interface ClusterSite {
  token: string;
  connectorId: string;
  credentials: { username: string; password: string };
  deviceKeys: string[];
}

async function xapi<T>(baseUrl: string, route: string, body: unknown, token?: string): Promise<T> {
  const response = await fetch(`${baseUrl}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${route}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

export async function seedClusterSite(
  baseUrl: string,
  databaseUrl: string,
  count: number,
): Promise<ClusterSite> {
  const { token, user } = await xapi<{ token: string; user: { accountId: string } }>(
    baseUrl,
    '/xapi/v1/auth/login',
    CLUSTER_ADMIN,
  );
  const connector = await xapi<{ id: string; credentials: { username: string; password: string } }>(
    baseUrl,
    '/xapi/v1/connectors',
    { title: 'plant broker', type: 'mqtt-broker' },
    token,
  );
  const deviceKeys = Array.from({ length: count }, (_, i) => `meter-${i}`);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const account = user.accountId;
    const driver = await db.query<{ id: string }>(
      `INSERT INTO device_drivers (id, account_id, title, description, shared, parser, target_variables, health_config, created_at, updated_at)
       VALUES (gen_random_uuid(), $1, 'json', '', false, '{"type":"json"}', '[]', '{"rules":[]}', now(), now()) RETURNING id`,
      [account],
    );
    await db.query(
      `INSERT INTO virtual_devices (id, account_id, connector_id, driver_id, device_id, title, description, tags, groups,
          key_value_data, activation_method, skip_frame_counter_check, health_state, reference_id, created_at, updated_at)
       SELECT gen_random_uuid(), $1, $2, $3, k, k, '', '{}', '{}', '{}', 'OTAA', false, 'Unknown', 'ref-' || k, now(), now()
         FROM unnest($4::text[]) AS k`,
      [account, connector.id, driver.rows[0]!.id, deviceKeys],
    );
    const twins = await db.query<{ id: string }>(
      `INSERT INTO digital_twins (id, account_id, path, title, reference_id, custom_properties, tags, created_at, updated_at)
       SELECT id, $1, ARRAY[id], 'twin ' || k, 'ref-' || k, '{}', '{}', now(), now()
         FROM (SELECT gen_random_uuid() AS id, k FROM unnest($2::text[]) AS k) AS t RETURNING id`,
      [account, deviceKeys],
    );
    await db.query(
      `INSERT INTO data_states (id, account_id, twin_id, key, title, value_type, source, meta, engine, created_at, updated_at)
       SELECT gen_random_uuid(), $1, t, 'v', 'v', 'number', '{"type": "dynamic-routing", "stateKey": "v"}', '{}', '{}', now(), now()
         FROM unnest($2::uuid[]) AS t`,
      [account, twins.rows.map((r) => r.id)],
    );
  } finally {
    await db.end();
  }
  return { token, connectorId: connector.id, credentials: connector.credentials, deviceKeys };
}

export interface FleetRun {
  /** Values whose PUBACK arrived. */
  acknowledged: Set<number>;
  /** Connections after the first, over all clients. */
  reconnects: number;
  /** Publishes mqtt.js failed (then sent again), over all clients. */
  failedPublishes: number;
  /** Resolves once every client has every message acknowledged (or the deadline passed). */
  done: Promise<void>;
  close(): Promise<void>;
}

/**
 * One mqtt.js client per device through `port` (HAProxy), reconnecting every 200 ms, each publishing
 * `perClient` QoS 1 messages `{"v": value}` with a value unique in the run, at most `inFlight` at a
 * time (`intervalMs`: after each acknowledgement, a pause before the next). mqtt.js keeps unacknowledged
 * messages and sends them again after a reconnect, but fails those published while it was still sending
 * kept ones when that connection closed (after the first CONNACK too: messages published before it are
 * kept); a failed publish is sent again 50 ms later, as a device would, so every message ends
 * acknowledged unless the deadline passes.
 */
export function runFleet(
  port: number,
  site: ClusterSite,
  perClient: number,
  options: { inFlight?: number; deadlineMs?: number; intervalMs?: number } = {},
): FleetRun {
  const acknowledged = new Set<number>();
  let reconnects = 0;
  let failedPublishes = 0;
  const inFlight = options.inFlight ?? 5;
  const clients: mqtt.MqttClient[] = [];
  // Set by close(): a retry still scheduled then must not publish (an ended client fails it at once).
  let closed = false;
  const runs = site.deviceKeys.map((key, index) => {
    const client = mqtt.connect(`mqtt://127.0.0.1:${port}`, {
      clientId: key,
      username: site.credentials.username,
      password: site.credentials.password,
      reconnectPeriod: 200,
      connectTimeout: 5000,
      clean: true,
    });
    clients.push(client);
    // Counted by CONNACK: mqtt.js emits 'connect' only once it has sent its kept messages again,
    // which a connection cut early (by the node loss itself) never finishes.
    let connects = 0;
    client.on('packetreceive', (packet) => {
      if (packet.cmd === 'connack' && connects++ > 0) reconnects++;
    });
    client.on('error', () => undefined);
    const topic = `connectors/${site.connectorId}/devices/${key}/up`;
    let next = 0;
    const failed: number[] = [];
    return new Promise<void>((resolve) => {
      let pending = 0;
      const pump = () => {
        while (!closed && pending < inFlight && (failed.length > 0 || next < perClient)) {
          const value = failed.shift() ?? index * 1_000_000 + next++;
          pending++;
          client.publish(topic, JSON.stringify({ v: value }), { qos: 1 }, (error) => {
            pending--;
            if (error) {
              failedPublishes++;
              failed.push(value);
              // Later, not from inside mqtt.js's callback: it fails queued publishes in one loop.
              setTimeout(pump, 50);
              return;
            }
            acknowledged.add(value);
            if (next >= perClient && failed.length === 0 && pending === 0) resolve();
            else if (options.intervalMs) setTimeout(pump, options.intervalMs);
            else pump();
          });
        }
      };
      pump();
    });
  });
  const deadline = new Promise<void>((resolve) => setTimeout(resolve, options.deadlineMs ?? 90_000).unref());
  return {
    acknowledged,
    get reconnects() {
      return reconnects;
    },
    get failedPublishes() {
      return failedPublishes;
    },
    done: Promise.race([Promise.all(runs).then(() => undefined), deadline]),
    close: async () => {
      closed = true;
      await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)));
    },
  };
}

export interface SeededCluster {
  db: { url: string; drop: () => Promise<void> };
  redis: Redis;
  haproxy: Haproxy;
  nodes: ClusterNode[];
  site: ClusterSite;
  stop(): Promise<void>;
}

/**
 * Three nodes with the site seeded, behind HAProxy. Node 1 starts first: it bootstraps the admin,
 * is seeded, and is started again so its caches and routing index hold what was seeded into the
 * tables; it also takes the leases (processing, schedulers) before the others start.
 */
export async function startSeededCluster(
  devices: number,
  env: Record<string, string>,
): Promise<SeededCluster> {
  const db = await createTestDatabase();
  const redis = await startRedis();
  const nodes = await Promise.all(
    ['node-1', 'node-2', 'node-3'].map((name) =>
      clusterNode(name, {
        databaseUrl: db.url,
        redisUrl: redis.url,
        env: {
          STELLWERK_ADMIN_EMAIL: CLUSTER_ADMIN.email,
          STELLWERK_ADMIN_PASSWORD: CLUSTER_ADMIN.password,
          ...env,
        },
      }),
    ),
  );
  await nodes[0]!.start();
  const site = await seedClusterSite(nodes[0]!.process!.baseUrl, db.url, devices);
  await nodes[0]!.stop();
  await nodes[0]!.start();
  await Promise.all([nodes[1]!.start(), nodes[2]!.start()]);
  const haproxy = await startHaproxy(nodes.map((n) => n.ports));
  return {
    db,
    redis,
    haproxy,
    nodes,
    site,
    stop: async () => {
      await Promise.all(nodes.map((n) => n.stop().catch(() => undefined)));
      killSpawnedServers();
      await haproxy.stop();
      await redis.stop();
      await db.drop();
    },
  };
}
