import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loseDisk } from './support/cluster.js';
import { runFleet, startSeededCluster, type SeededCluster } from './support/cluster-site.js';

/**
 * Cluster mode loses nothing acknowledged when a node dies with its disk: three nodes behind HAProxy
 * share Redis and one PostgreSQL database; 200 devices send 20,000 QoS 1 messages through HAProxy;
 * mid-run the node that processes every node's packets is SIGKILLed and its data directory deleted.
 * Its clients reconnect through HAProxy to the others, which take over the processing; every
 * acknowledged message is then in `packets` and in the time series, and none twice in the time series.
 */

const DEVICES = 200;
const PER_CLIENT = 100;

let cluster: SeededCluster;
let sql: pg.Client;

beforeAll(async () => {
  cluster = await startSeededCluster(DEVICES, {
    // Faulty after 3 s of silence, so /xapi/v1/health shows the dead node within the test.
    STELLWERK_HEARTBEAT_INTERVAL_MS: '1000',
    STELLWERK_NODE_FAULTY_AFTER_MS: '3000',
  });
  sql = new pg.Client({ connectionString: cluster.db.url });
  await sql.connect();
}, 180_000);

afterAll(async () => {
  await sql?.end();
  await cluster?.stop();
});

/** The node holding the processing lease (its PostgreSQL session holds the advisory lock). */
async function processingNodePid(): Promise<number | undefined> {
  const { rows } = await sql.query<{ pid: number }>(
    `SELECT a.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.objid = $1 AND l.granted`,
    [0x5354_4c49],
  );
  return rows[0]?.pid;
}

describe('cluster mode: losing a node under ingest', () => {
  it('keeps every acknowledged message, once in the time series, and the clients reconnect through HAProxy', async () => {
    expect(await processingNodePid()).toBeDefined();
    const { nodes, haproxy, site } = cluster;
    const fleet = runFleet(haproxy.mqtt, site, PER_CLIENT);
    // Mid-run: the first node (the processing one) dies with its disk.
    const began = Date.now();
    while (fleet.acknowledged.size < (DEVICES * PER_CLIENT) / 3) {
      if (Date.now() - began > 60_000)
        throw new Error(`only ${fleet.acknowledged.size} acknowledged in 60 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await nodes[0]!.kill();
    await loseDisk(nodes[0]!);
    const killedAt = fleet.acknowledged.size;
    await fleet.done;
    await fleet.close();
    const acknowledged = [...fleet.acknowledged];
    expect(
      acknowledged.length,
      `every message acknowledged in the end (${fleet.failedPublishes} failed publishes sent again)`,
    ).toBe(DEVICES * PER_CLIENT);
    expect(killedAt).toBeLessThan(DEVICES * PER_CLIENT);
    expect(fleet.reconnects, 'clients of the dead node reconnected').toBeGreaterThan(0);

    // Another node took over the processing.
    await expect.poll(processingNodePid, { timeout: 10_000 }).toBeDefined();
    const valuesIn = async (query: string) =>
      new Set((await sql.query<{ v: number }>(query)).rows.map((r) => Number(r.v)));
    await expect
      .poll(
        async () =>
          (await sql.query<{ n: string }>(`SELECT count(DISTINCT value) AS n FROM ts_points`)).rows[0]!.n,
        { timeout: 60_000, interval: 500 },
      )
      .toBe(String(DEVICES * PER_CLIENT));
    const stored = await valuesIn(
      `SELECT (convert_from(payload, 'UTF8')::jsonb ->> 'v')::bigint AS v FROM packets`,
    );
    const points = await valuesIn(`SELECT value AS v FROM ts_points`);
    expect(
      acknowledged.filter((v) => !stored.has(v)),
      'acknowledged but not in packets',
    ).toEqual([]);
    expect(
      acknowledged.filter((v) => !points.has(v)),
      'acknowledged but not in the time series',
    ).toEqual([]);
    const twice = await sql.query(`SELECT value, count(*) FROM ts_points GROUP BY value HAVING count(*) > 1`);
    expect(twice.rows, 'values twice in the time series').toEqual([]);
  }, 240_000);
});
