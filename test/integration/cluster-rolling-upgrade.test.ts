import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFleet, startSeededCluster, type SeededCluster } from './support/cluster-site.js';

/**
 * A rolling upgrade of a three-node cluster under ingest: each node in turn is stopped (SIGTERM, as a
 * service manager stops it for a package upgrade) and started again, while 100 devices keep sending
 * QoS 1 messages through HAProxy. No acknowledged message is missing afterwards, and
 * `/xapi/v1/health`, asked through HAProxy all along, answers every time and shows each node's state
 * as it goes: stopped (or faulty) while it is down, ok once it is back.
 */

const DEVICES = 100;
const PER_CLIENT = 250;

let cluster: SeededCluster;

beforeAll(async () => {
  cluster = await startSeededCluster(DEVICES, {
    STELLWERK_HEARTBEAT_INTERVAL_MS: '1000',
    STELLWERK_NODE_FAULTY_AFTER_MS: '3000',
  });
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
});

interface NodeHealth {
  name: string;
  status: 'ok' | 'faulty' | 'stopped';
  startedAt: string;
}

/** `/xapi/v1/health` through HAProxy: each node's latest row by name. */
async function health(): Promise<Map<string, NodeHealth>> {
  const response = await fetch(`http://127.0.0.1:${cluster.haproxy.http}/xapi/v1/health`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { nodes: NodeHealth[] };
  const latest = new Map<string, NodeHealth>();
  for (const node of body.nodes) {
    const seen = latest.get(node.name);
    if (!seen || seen.startedAt < node.startedAt) latest.set(node.name, node);
  }
  return latest;
}

describe('cluster mode: rolling upgrade', () => {
  it('restarts the nodes one after another during ingest, loses no acknowledged message and reports each node throughout', async () => {
    const { nodes, haproxy, site, db } = cluster;
    const fleet = runFleet(haproxy.mqtt, site, PER_CLIENT, {
      inFlight: 1,
      intervalMs: 200,
      deadlineMs: 150_000,
    });
    const seen: string[] = [];
    for (const node of nodes) {
      await node.stop();
      // `stopped` once its clean stop is recorded; `faulty` if the stop was cut short by its deadline.
      await expect
        .poll(async () => (await health()).get(node.name)?.status, { timeout: 20_000 })
        .toMatch(/^(stopped|faulty)$/);
      seen.push(`${node.name} down`);
      await node.start();
      await expect
        .poll(async () => (await health()).get(node.name)?.status, {
          timeout: 20_000,
        })
        .toBe('ok');
      seen.push(`${node.name} ok`);
    }
    expect(seen).toEqual([
      'node-1 down',
      'node-1 ok',
      'node-2 down',
      'node-2 ok',
      'node-3 down',
      'node-3 ok',
    ]);
    expect(fleet.acknowledged.size, 'still sending after the last restart').toBeLessThan(
      DEVICES * PER_CLIENT,
    );
    await fleet.done;
    await fleet.close();
    expect(
      fleet.acknowledged.size,
      `every message acknowledged in the end (${fleet.failedPublishes} failed publishes sent again)`,
    ).toBe(DEVICES * PER_CLIENT);
    expect(fleet.reconnects).toBeGreaterThan(0);

    const sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    try {
      const { rows } = await sql.query<{ v: string }>(
        `SELECT DISTINCT (convert_from(payload, 'UTF8')::jsonb ->> 'v') AS v FROM packets`,
      );
      const stored = new Set(rows.map((r) => Number(r.v)));
      expect(
        [...fleet.acknowledged].filter((v) => !stored.has(v)),
        'acknowledged but not stored',
      ).toEqual([]);
    } finally {
      await sql.end();
    }
  }, 240_000);
});
