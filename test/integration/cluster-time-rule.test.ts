import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterNode, startRedis, type ClusterNode, type Redis } from './support/cluster.js';
import { CLUSTER_ADMIN } from './support/cluster-site.js';
import { createTestDatabase } from './support/database.js';
import { startHttpReceiver, type HttpReceiver } from './support/http-receiver.js';
import { killSpawnedServers } from './support/server-process.js';

/**
 * A time rule fires once per due time while the node running the rule scheduler dies: a rule every
 * 4 s calls a webhook; node 1 holds the scheduler's lease and is SIGKILLed; node 2 takes the lease
 * and goes on. The calls arrive about every 4 s throughout: none twice for one due time (two calls
 * within a second), none left out (a gap of two periods; the takeover may make one call late).
 */

const PERIOD_MS = 4000;
const RULE_SCHEDULER_LOCK = 0x5255_4c45;

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let redis: Redis;
let receiver: HttpReceiver;
let nodes: ClusterNode[] = [];
let sql: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await startRedis();
  receiver = await startHttpReceiver();
  const env = {
    STELLWERK_ADMIN_EMAIL: CLUSTER_ADMIN.email,
    STELLWERK_ADMIN_PASSWORD: CLUSTER_ADMIN.password,
    // The webhook receiver of this test listens on loopback, which the outgoing guard refuses by default.
    STELLWERK_OUTGOING_ALLOW_PRIVATE: '127.0.0.0/8',
  };
  nodes = await Promise.all(
    ['node-1', 'node-2'].map((name) => clusterNode(name, { databaseUrl: db.url, redisUrl: redis.url, env })),
  );
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
}, 120_000);

afterAll(async () => {
  await sql?.end();
  await Promise.all(nodes.map((n) => n.stop().catch(() => undefined)));
  killSpawnedServers();
  await receiver?.close();
  await redis?.stop();
  await db?.drop();
});

const schedulerHeld = async () =>
  (
    await sql.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND granted`, [
      RULE_SCHEDULER_LOCK,
    ])
  ).rowCount;

describe('cluster mode: a time rule while its leader dies', () => {
  it('fires once per due time across the takeover', async () => {
    // Node 1 alone first: it takes the rule scheduler's lease.
    const first = await nodes[0]!.start();
    await expect.poll(schedulerHeld, { timeout: 10_000 }).toBe(1);
    await nodes[1]!.start();
    const call = async <T>(route: string, body: unknown, token?: string) => {
      const response = await fetch(`${first.baseUrl}${route}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify(body),
      });
      expect(response.status, await response.clone().text()).toBeLessThan(300);
      return (await response.json()) as T;
    };
    const { token } = await call<{ token: string }>('/xapi/v1/auth/login', CLUSTER_ADMIN);
    const twin = await call<{ id: string }>('/xapi/v1/digital-twins', { title: 'Pump house' }, token);
    const hook = await call<{ id: string }>(
      '/xapi/v1/connectors',
      { title: 'control room', type: 'webhook-out', config: { url: receiver.url } },
      token,
    );
    await call(
      '/xapi/v1/rules',
      {
        title: 'Every 4 s',
        twinId: twin.id,
        trigger: { type: 'time', schedule: { intervalSeconds: PERIOD_MS / 1000 } },
        commands: [{ type: 'webhook', connectorId: hook.id, body: { at: '{{time}}' } }],
      },
      token,
    );
    const arrivals: number[] = [];
    const seen = () => {
      while (arrivals.length < receiver.received.length) arrivals.push(Date.now());
    };
    const watch = setInterval(seen, 20);
    try {
      await receiver.waitFor(2, 15_000);
      await nodes[0]!.kill();
      const killedAt = Date.now();
      await expect.poll(schedulerHeld, { timeout: 10_000 }).toBe(1);
      while (Date.now() - killedAt < 4 * PERIOD_MS) await new Promise((r) => setTimeout(r, 100));
      seen();
    } finally {
      clearInterval(watch);
    }
    const gaps = arrivals.slice(1).map((at, i) => at - arrivals[i]!);
    expect(arrivals.length).toBeGreaterThanOrEqual(5);
    expect(Math.min(...gaps), `no due time twice (gaps ${gaps.join(', ')} ms)`).toBeGreaterThan(1000);
    expect(Math.max(...gaps), `no due time left out (gaps ${gaps.join(', ')} ms)`).toBeLessThan(
      PERIOD_MS * 2 - 500,
    );
  }, 120_000);
});
