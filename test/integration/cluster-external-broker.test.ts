import mqtt from 'mqtt';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { OWNER_LOCK_CLASS, ownerKey } from '../../server/src/connectors/connector-owner.js';
import { PACKET_STATUS_SQL } from '../../server/src/ingest/commit-batch.stage.js';
import { clusterNode, startRedis, type ClusterNode, type Redis } from './support/cluster.js';
import { createTestDatabase } from './support/database.js';
import { startMosquitto, type Mosquitto } from './support/mosquitto.js';
import { killSpawnedServers, sleep } from './support/server-process.js';
import { waitFor } from './support/wait.js';

/**
 * External broker mode: two nodes consume one mqtt-in connector's shared subscription on Debian's
 * Mosquitto; one node is SIGKILLed while messages flow. The survivor adopts the dead node's
 * session (the broker keeps queuing to it), so every message ends up in `packets` exactly once.
 */

const MESSAGES = 3000;
const ADMIN = { email: 'extbroker@stellwerk.test', password: 'external broker test password' };
/** Slot locks of shared subscriptions (mqtt-in.shared.ts). */
const METERS = 10;
const SLOT_LOCK_CLASS = 0x4d51_5353;

let db: { url: string; drop: () => Promise<void> } | undefined;
let redis: Redis | undefined;
let broker: Mosquitto | undefined;
const nodes: ClusterNode[] = [];
afterAll(async () => {
  killSpawnedServers();
  await broker?.stop();
  await redis?.stop();
  await db?.drop();
});

async function api<T>(base: string, path: string, init: { token?: string; body?: unknown } = {}): Promise<T> {
  const response = await fetch(`${base}${path}`, {
    method: init.body === undefined ? 'GET' : 'POST',
    headers: {
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

describe('external broker mode', () => {
  it('processes each message of a shared subscription once, none lost, when a consuming node dies', async () => {
    db = await createTestDatabase();
    redis = await startRedis();
    // Mosquitto's default queue of 1000 messages per session would drop the dead node's share.
    broker = await startMosquitto(async () => ['allow_anonymous true', 'max_queued_messages 0']);
    const env = {
      STELLWERK_ADMIN_EMAIL: ADMIN.email,
      STELLWERK_ADMIN_PASSWORD: ADMIN.password,
      STELLWERK_OUTGOING_ALLOW_PRIVATE: '127.0.0.1',
      STELLWERK_MQTT_HOST: '127.0.0.1',
    };
    for (const name of ['ext-1', 'ext-2'])
      nodes.push(await clusterNode(name, { databaseUrl: db.url, redisUrl: redis.url, env }));
    const [first, second] = nodes as [ClusterNode, ClusterNode];
    await first.start();
    // A dial-out connector without a shared subscription runs on one node: the first one here.
    const firstLogin = await api<{ token: string }>(first.process!.baseUrl, '/xapi/v1/auth/login', {
      body: ADMIN,
    });
    const plain = await api<{ id: string }>(first.process!.baseUrl, '/xapi/v1/connectors', {
      token: firstLogin.token,
      body: {
        title: 'plain subscription',
        type: 'mqtt-in',
        config: { url: `mqtt://127.0.0.1:${broker.port}`, topics: ['plain/+/up'], clientId: 'plain-one' },
      },
    });
    await second.start();
    const base = second.process!.baseUrl;
    const { token } = await api<{ token: string }>(base, '/xapi/v1/auth/login', { body: ADMIN });
    const connector = await api<{ id: string }>(base, '/xapi/v1/connectors', {
      token,
      body: {
        title: 'external broker',
        type: 'mqtt-in',
        config: {
          url: `mqtt://127.0.0.1:${broker.port}`,
          topics: ['meters/+/up'],
          deviceIdTopicSegment: 1,
          qos: 1,
          sharedGroup: 'stellwerk',
          sharedSlots: 2,
        },
      },
    });

    for (let m = 0; m < METERS; m++)
      await api(base, '/xapi/v1/virtual-devices', {
        token,
        body: { device_id: `m-${m}`, title: `Meter ${m}`, connectorId: connector.id },
      });

    const sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    try {
      // Each node holds one slot: the one that did not create the connector finds it by polling.
      const holders = async () =>
        (
          await sql.query<{ pids: string }>(
            `SELECT count(DISTINCT pid) AS pids FROM pg_locks
              WHERE locktype = 'advisory' AND objsubid = 2 AND granted AND classid = $1::bigint::oid`,
            [SLOT_LOCK_CLASS],
          )
        ).rows[0]!.pids;
      await waitFor(async () => ((await holders()) === '2' ? true : undefined), 20_000, {
        what: 'both nodes holding a slot',
      });
      await sleep(1000); // both slots subscribed
      const owners = async () =>
        (
          await sql.query<{ pid: number }>(
            `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND granted
                AND classid = $1::bigint::oid AND objid = $2::bigint::oid`,
            [OWNER_LOCK_CLASS, ownerKey(plain.id)],
          )
        ).rows.map((r) => r.pid);
      const [firstOwner] = await owners();
      expect(await owners()).toHaveLength(1);

      const stored = async () =>
        Number(
          (
            await sql.query<{ n: string }>('SELECT count(*) AS n FROM packets WHERE connector_id = $1', [
              connector.id,
            ])
          ).rows[0]!.n,
        );
      const publisher = await mqtt.connectAsync(`mqtt://127.0.0.1:${broker.port}`, {
        clientId: 'extbroker-publisher',
      });
      let acked = 0;
      const publishing = (async () => {
        for (let seq = 0; seq < MESSAGES; seq += 50) {
          await Promise.all(
            Array.from({ length: 50 }, (_, i) =>
              publisher.publishAsync(`meters/m-${(seq + i) % METERS}/up`, JSON.stringify({ seq: seq + i }), {
                qos: 1,
              }),
            ),
          );
          acked += 50;
          await sleep(20);
        }
      })();
      await waitFor(async () => ((await stored()) >= MESSAGES / 4 ? true : undefined), 20_000, {
        what: 'a quarter of the messages stored',
      });
      await first.kill();
      await publishing;
      expect(acked).toBe(MESSAGES);
      await publisher.endAsync();
      // The killed node stays dead: what it acknowledged is in the table, the rest the survivor
      // drains from its slot's session.
      await waitFor(async () => ((await holders()) === '1' ? true : undefined), 20_000, {
        what: 'the survivor holding both slots',
      });
      // The plain connector moved to the survivor, still on one node.
      await waitFor(
        async () => {
          const now = await owners();
          return now.length === 1 && now[0] !== firstOwner ? true : undefined;
        },
        10_000,
        { what: 'the plain connector running on the survivor' },
      );

      const counts = async () =>
        (
          await sql.query<{ seq: number; n: string }>(
            `SELECT (convert_from(payload, 'UTF8')::jsonb ->> 'seq')::int AS seq, count(*) AS n
               FROM packets WHERE connector_id = $1 GROUP BY 1`,
            [connector.id],
          )
        ).rows;
      const rows = await waitFor(
        async () => {
          const now = await counts();
          return now.length === MESSAGES ? now : undefined;
        },
        90_000,
        { intervalMs: 500, what: 'every message in packets' },
      );
      await sleep(2000); // a late duplicate would show up now
      const after = await counts();
      const duplicates = after.filter((r) => r.n !== '1').map((r) => r.seq);
      console.info(
        `external broker: ${MESSAGES} published, ${rows.length} distinct stored, duplicates ${duplicates.length}`,
      );
      if (duplicates.length)
        console.error(
          'DUPLICATES',
          JSON.stringify(
            (
              await sql.query(
                `SELECT id, received_at, meta, convert_from(payload, 'UTF8') AS p FROM packets
                  WHERE connector_id = $1 AND (convert_from(payload, 'UTF8')::jsonb ->> 'seq')::int = ANY($2)`,
                [connector.id, duplicates],
              )
            ).rows,
          ),
        );
      expect(duplicates).toEqual([]);
      expect(after).toHaveLength(MESSAGES);
      // Processed: every packet parsed, once (the ingest pipeline's commit moves the cursor past it).
      const { rows: statuses } = await sql.query<{ status: string | null; n: string }>(
        `SELECT ${PACKET_STATUS_SQL} AS status, count(*) AS n FROM packets p WHERE connector_id = $1 GROUP BY 1`,
        [connector.id],
      );
      expect(statuses).toEqual([{ status: 'parsed', n: String(MESSAGES) }]);
    } finally {
      await sql.end();
    }
  }, 240_000);
});
