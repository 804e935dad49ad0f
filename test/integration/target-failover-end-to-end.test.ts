import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, startBrokerApp, type BrokerTestApp } from './support/broker.js';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { startInfluxDb, type InfluxDb } from './support/influxdb.js';
import { sql } from './support/ingest-fixtures.js';
import { influxPoints, sortSeen, type SeenPoint } from './support/target-readback.js';
import { waitFor } from './support/wait.js';

/**
 * Failover through the real server path: targets [influxdb-v1 (primary), postgres].
 * 10,000 points arrive as MQTT publishes (QoS 1) of 20 devices routed to 20 twins with 5 states
 * each; influxd is SIGKILLed part-way and started again on the same data directory and port.
 * While it is down, POST /xapi/v1/timeseries/query is served by postgres (`meta.target`), with
 * every point so far; afterwards every point is in both targets, and the primary serves again.
 */
let t: BrokerTestApp;
let influx: InfluxDb;
let call: ReturnType<typeof caller>;
let client: MqttClient;
const INFLUX_DB = 'stellwerk_failover';
const DEVICES = 20;
const KEYS = ['s0', 's1', 's2', 's3', 's4'];
const ROUNDS = 100;
const KILL_AFTER_ROUND = 30;
const PAUSE_AFTER_ROUND = 60;

beforeAll(async () => {
  influx = await startInfluxDb();
  t = await startBrokerApp({
    env: { STELLWERK_TIMESERIES_TARGETS: `influxdb-v1+${influx.url}/${INFLUX_DB}, postgres` },
  });
  // The writer is a lifecycle part: tests start it themselves (createTestApp starts only ingest).
  await t.services.timeseries.runtime.start();
  call = caller(t, bearer(await login(t)));
});

afterAll(async () => {
  await client?.endAsync();
  await t?.services.timeseries.runtime.stop();
  await t?.closeAll();
  await influx?.stop();
});

const created = async (url: string, body: unknown) =>
  expectStatus<{ id: string; credentials?: { username: string; password: string } }>(
    await call('POST', url, body),
    201,
  );

interface QueryAnswer {
  rows: Array<Array<string | number | null>>;
  meta: { target: string; rowCount: number };
}
const query = async (text: string) =>
  expectStatus<QueryAnswer>(await call('POST', '/xapi/v1/timeseries/query', { query: text }), 200);
const COUNT_ALL = `SELECT count(*) AS n WHERE twin.referenceId LIKE 'FAIL-%'`;

/** Waits until the query endpoint counts `n` points (the ingest pipeline and the writer have caught up). */
const countedBy = (n: number) =>
  waitFor(
    async () => {
      const answer = await query(COUNT_ALL);
      return answer.rows[0]![0] === n ? answer : undefined;
    },
    20_000,
    { what: `the query endpoint to count ${n} points` },
  );

const backlogOf = async (target: string) =>
  (await t.services.timeseries.writer.backlog()).find((b) => b.target === target)!;

describe('influxd killed during an ingest of 10,000 points', () => {
  let connectorId: string;
  /** State id per device index and key. */
  const stateIds: Array<Record<string, string>> = [];
  const timings: Record<string, number> = {};

  it('is configured through the XAPI: 20 devices routed to 20 twins with 5 states each', async () => {
    const started = Date.now();
    const connector = await created('/xapi/v1/connectors', {
      type: 'mqtt-broker',
      title: 'Failover gateway',
    });
    connectorId = connector.id;
    const driver = await created('/xapi/v1/device-drivers', { title: 'JSON', parser: { type: 'json' } });
    for (let d = 0; d < DEVICES; d++) {
      const referenceId = `FAIL-${String(d).padStart(2, '0')}`;
      await created('/xapi/v1/virtual-devices', {
        device_id: `meter-${d}`,
        title: `Meter ${d}`,
        connectorId,
        deviceDriverId: driver.id,
        referenceId,
      });
      const twin = await created('/xapi/v1/digital-twins', { title: `Line ${d}`, referenceId });
      const states = await Promise.all(
        KEYS.map((key) =>
          created(`/xapi/v1/digital-twins/${twin.id}/states`, {
            key,
            source: { type: 'dynamic-routing', stateKey: key },
          }),
        ),
      );
      stateIds.push(Object.fromEntries(KEYS.map((key, i) => [key, states[i]!.id])));
    }
    client = await connectClient(`mqtt://127.0.0.1:${t.mqttPort}`, connector.credentials!);
    timings.setupMs = Date.now() - started;
  });

  /** One round: every device publishes a new value for each of its keys (QoS 1: acknowledged once stored). */
  const publishRound = async (round: number) => {
    await Promise.all(
      Array.from({ length: DEVICES }, (_, d) =>
        client.publishAsync(
          `connectors/${connectorId}/devices/meter-${d}/up`,
          JSON.stringify(Object.fromEntries(KEYS.map((key, k) => [key, d * 10_000 + round * 10 + k]))),
          { qos: 1 },
        ),
      ),
    );
    // A state's values land at least a millisecond apart (InfluxDB keeps one point per series and ms).
    await new Promise((resolve) => setTimeout(resolve, 2));
  };

  it('while influxd is down, queries are served by postgres, with every point so far', async () => {
    const started = Date.now();
    for (let round = 0; round < PAUSE_AFTER_ROUND; round++) {
      await publishRound(round);
      if (round === KILL_AFTER_ROUND - 1) {
        // The primary serves while it is well (and at most 2 s behind), and is asked right before it dies.
        await waitFor(
          async () => ((await query(COUNT_ALL)).meta.target === 'influxdb-v1' ? true : undefined),
          5_000,
          { what: 'the primary to serve' },
        );
        await influx.kill();
        timings.killedAtRound = round + 1;
        // Asked again at once (its health is still remembered as good): the answer comes from postgres.
        expect((await query(COUNT_ALL)).meta.target).toBe('postgres');
      }
    }
    timings.publishFirstMs = Date.now() - started;
    const answer = await countedBy(PAUSE_AFTER_ROUND * DEVICES * KEYS.length);
    expect(answer.meta.target).toBe('postgres');
    const perState = await query(
      `SELECT state.id, count(*), min(value), max(value) WHERE twin.referenceId LIKE 'FAIL-%' GROUP BY state.id`,
    );
    expect(perState.meta.target).toBe('postgres');
    const figures = (d: number, k: number) => [d * 10_000 + k, d * 10_000 + (PAUSE_AFTER_ROUND - 1) * 10 + k];
    expect(Object.fromEntries(perState.rows.map(([id, ...rest]) => [id, rest]))).toEqual(
      Object.fromEntries(
        stateIds.flatMap((byKey, d) =>
          KEYS.map((key, k) => [byKey[key], [PAUSE_AFTER_ROUND, ...figures(d, k)]]),
        ),
      ),
    );
  });

  it('influxd started again receives its backlog from the outbox; then every point is in both targets', async () => {
    let started = Date.now();
    for (let round = PAUSE_AFTER_ROUND; round < ROUNDS; round++) await publishRound(round);
    timings.publishSecondMs = Date.now() - started;
    const total = DEVICES * KEYS.length * ROUNDS;
    const inPostgresNow = await countedBy(total);
    expect(inPostgresNow.meta.target).toBe('postgres');
    // Every point committed meanwhile waits in the outbox (PostgreSQL), not in memory.
    const spooled = await backlogOf('influxdb-v1');
    timings.spooledPoints = spooled.points;
    expect(spooled.points).toBeGreaterThanOrEqual((ROUNDS - KILL_AFTER_ROUND) * DEVICES * KEYS.length);

    // The writer is held while influxd comes back, as its retry backoff (up to 10 s) may hold it:
    // a certain window in which influxd is healthy again but has not received its backlog.
    await t.services.timeseries.writer.stop();
    started = Date.now();
    await influx.restart();
    timings.influxRestartMs = Date.now() - started;
    // Past the store's 1 s memory of influxd's health: it answers its health check again, but is
    // behind, so postgres serves — complete — instead of the primary answering with holes.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const early = await query(COUNT_ALL);
    expect(early.meta.target).toBe('postgres');
    expect(early.rows[0]![0]).toBe(total);
    await t.services.timeseries.writer.start();
    // Writer released: queried until influxd has caught up, every answer is complete, and comes
    // from postgres as long as influxd is behind.
    started = Date.now();
    const servedWhileCatchingUp: string[] = [];
    await waitFor(
      async () => {
        const answer = await query(COUNT_ALL);
        expect(answer.rows[0]![0]).toBe(total);
        if ((await backlogOf('influxdb-v1')).rows === 0) return true;
        servedWhileCatchingUp.push(answer.meta.target);
        return undefined;
      },
      30_000,
      { intervalMs: 100, what: 'influxd to receive its backlog' },
    );
    expect(servedWhileCatchingUp.filter((target) => target !== 'postgres')).toEqual([]);
    timings.queriesWhileCatchingUp = servedWhileCatchingUp.length;
    timings.influxDrainMs = Date.now() - started;

    // What was sent: every key of every stored packet, at the packet's arrival time.
    const deviceIndex = (key: string) => Number(key.slice('meter-'.length));
    const packets = await sql<{ device_key: string; payload: Buffer; received_at: string }>(
      t,
      `SELECT device_key, payload, to_json(received_at) #>> '{}' AS received_at FROM packets
        WHERE connector_id = ? ORDER BY id`,
      [connectorId],
    );
    expect(packets).toHaveLength(DEVICES * ROUNDS);
    const expected = sortSeen(
      packets.flatMap((p) =>
        Object.entries(JSON.parse(p.payload.toString()) as Record<string, number>).map(([key, value]) => ({
          key: stateIds[deviceIndex(p.device_key)]![key]!,
          time: Date.parse(p.received_at),
          value,
        })),
      ),
    );
    expect(expected).toHaveLength(total);
    expect(new Set(expected.map((p) => `${p.key} ${p.time}`)).size).toBe(total);

    const inPostgres = await sql<{ state_id: string; time: string; value: number }>(
      t,
      `SELECT state_id, (extract(epoch FROM time) * 1000)::float8 AS time, value FROM ts_points`,
    );
    const fromPostgres = sortSeen(
      inPostgres.map((r) => ({ key: r.state_id, time: Number(r.time), value: r.value })),
    );
    const fromInflux = sortSeen(
      await influxPoints(influx.url, INFLUX_DB, { tag: 'account_id', value: t.rootAccountId }, 'state_id'),
    );
    expect(fromPostgres).toHaveLength(total);
    expect(fromInflux).toHaveLength(total);
    expect(fromPostgres).toEqual(expected);
    expect(fromInflux).toEqual(expected);

    // Caught up: the primary serves again, with every point.
    const all = await waitFor(
      async () => {
        const a = await query(
          `SELECT state.id, time, value WHERE twin.referenceId LIKE 'FAIL-%' LIMIT 100000`,
        );
        return a.meta.target === 'influxdb-v1' ? a : undefined;
      },
      5_000,
      { what: 'the primary to serve again' },
    );
    const served: SeenPoint[] = all.rows.map(([key, time, value]) => ({
      key: key as string,
      time: Date.parse(time as string),
      value: value as number,
    }));
    expect(sortSeen(served)).toEqual(expected);
    console.info(`failover figures: ${JSON.stringify({ points: total, ...timings })}`);
  });
});
