import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { BatchCommitHook } from '../../server/src/ingest/commit-batch.stage.js';
import type { PacketOutcome } from '../../server/src/ingest/parse-packet.stage.js';
import { IngestPipeline } from '../../server/src/ingest/pipeline.js';
import { PacketStore, spoolPositionKey } from '../../server/src/ingest/packet-store.js';
import { DriverParsing } from '../../server/src/drivers/driver-parsing.service.js';
import { Metrics } from '../../server/src/platform/metrics.js';
import { nextPeriodStart } from '../../server/src/states/engine/calendar.js';
import type { StateChange } from '../../server/src/states/engine/state-work.js';
import {
  createBrokerConnector,
  runMosquitto,
  startBrokerApp,
  upTopic,
  type BrokerCredentials,
  type BrokerTestApp,
} from './support/broker.js';
import { login } from './support/identity.js';
import { insertDriver, packet, processedPackets, sql } from './support/ingest-fixtures.js';
import {
  insertDevice,
  insertState,
  insertTwin,
  storedPoints,
  pointsByKey,
  stateRows,
} from './support/twin-fixtures.js';
import { waitFor } from './support/wait.js';

let t: BrokerTestApp;
let driverId: string;
const ZONE = 'Europe/Berlin';
const changes: StateChange[] = [];

beforeAll(async () => {
  t = await startBrokerApp();
  driverId = await insertDriver(t);
  await sql(t, 'UPDATE accounts SET time_zone = ? WHERE id = ?', [ZONE, t.rootAccountId]);
  t.services.stateEngine.onStateChanges((c) => changes.push(...c));
});
afterAll(async () => {
  await t?.closeAll();
});

const publish = async (c: BrokerCredentials, device: string, body: unknown) => {
  const run = await runMosquitto('mosquitto_pub', [
    ...['-h', '127.0.0.1', '-p', String(t.mqttPort), '-u', c.username, '-P', c.password],
    ...['-V', 'mqttv311', '-q', '1', '-t', upTopic(c, device), '-m', JSON.stringify(body)],
  ]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
};

/** Waits out the last seconds of a local day, so values published together share one day. */
async function clearOfMidnight() {
  const left = nextPeriodStart('day', Date.now(), ZONE) - Date.now();
  if (left < 20_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

const pointCount = async () =>
  Number((await sql<{ n: string }>(t, 'SELECT count(*) AS n FROM ts_points'))[0]!.n);

describe('state engine: devices → twin states → aggregates → points', () => {
  let twinId: string;
  let ids: Record<string, string>;
  let c: BrokerCredentials;
  let deviceId: string;

  it('routes a device with a referenceId to the twin with the same referenceId, with aggregates following', async () => {
    c = await createBrokerConnector(t);
    deviceId = await insertDevice(t, driverId, c.connectorId, 'pump-7-meter', 'PUMP-7');
    twinId = await insertTwin(t, { referenceId: 'PUMP-7', title: 'Pump 7' });
    const flow = await insertState(t, twinId, 'flow', { type: 'dynamic-routing', stateKey: 'flow' });
    const other = await insertState(t, twinId, 'other', null);
    ids = {
      flow,
      other,
      status: await insertState(
        t,
        twinId,
        'status',
        { type: 'connector', connectorId: c.connectorId, deviceId, stateKey: 'status' },
        { valueType: 'string' },
      ),
      total: await insertState(t, twinId, 'total', {
        type: 'aggregate',
        operation: 'sum',
        stateIds: [flow, other],
      }),
      daySum: await insertState(t, twinId, 'daySum', {
        type: 'time-aggregated',
        stateId: flow,
        operation: 'sum',
        period: 'day',
      }),
      dayCount: await insertState(t, twinId, 'dayCount', {
        type: 'time-aggregated',
        stateId: flow,
        operation: 'count',
        period: 'day',
      }),
      previousDayCount: await insertState(t, twinId, 'previousDayCount', {
        type: 'time-aggregated',
        stateId: flow,
        operation: 'count',
        period: 'previous-day',
      }),
    };
    t.services.stateEngine.definitionsChanged(twinId);
    expect(await t.services.stateEngine.setValue(other, 100, new Date())).toEqual({ changed: true });
    expect(await t.services.stateEngine.setValue(other, 100, new Date())).toEqual({ changed: false });

    await clearOfMidnight();
    await publish(c, 'pump-7-meter', { flow: 2.5, status: 'on' });
    await publish(c, 'pump-7-meter', { flow: 4 });
    await publish(c, 'pump-7-meter', { flow: 4 });
    const rows = await waitFor(
      async () => {
        const r = await stateRows(t, twinId);
        return r.dayCount?.value === 3 ? r : undefined;
      },
      15_000,
      { what: 'three flow values counted' },
    );
    expect(Object.fromEntries(Object.entries(rows).map(([k, r]) => [k, r.value]))).toEqual({
      flow: 4,
      other: 100,
      status: 'on',
      total: 104,
      daySum: 10.5,
      dayCount: 3,
      previousDayCount: 0,
    });
    // The repeated 4 counted, but did not move the flow's timestamp.
    const [first, second] = (
      await sql<{ received_at: string }>(
        t,
        `SELECT to_json(received_at) #>> '{}' AS received_at FROM packets WHERE connector_id = ? ORDER BY id`,
        [c.connectorId],
      )
    ).map((p) => new Date(p.received_at));
    expect(rows.flow!.timestamp).toEqual(second);
    expect(rows.status!.timestamp).toEqual(first);
    expect(rows.flow!.warning).toBeNull();
  });

  it('stores one point per value change, with twin, state, time and value', async () => {
    const points = (await storedPoints(t)).filter((p) => p.twinId === twinId);
    expect(pointsByKey(points)).toEqual({
      other: [100],
      total: [100, 102.5, 104],
      flow: [2.5, 4],
      status: ['on'],
      daySum: [2.5, 6.5, 10.5],
      dayCount: [1, 2, 3],
      previousDayCount: [0],
    });
    const flowPoints = points.filter((p) => p.stateKey === 'flow');
    expect(flowPoints.every((p) => p.stateId === ids.flow && p.accountId === t.rootAccountId)).toBe(true);
    const rows = await stateRows(t, twinId);
    expect(flowPoints[1]!.time).toEqual(rows.flow!.timestamp);
    // Listeners heard the same changes after each commit.
    expect(changes.filter((ch) => ch.stateId === ids.dayCount).map((ch) => ch.value)).toEqual([1, 2, 3]);
  });

  it('keeps a value that does not fit the state type and warns', async () => {
    await publish(c, 'pump-7-meter', { flow: 'high' });
    const rows = await waitFor(async () => {
      const r = await stateRows(t, twinId);
      return r.flow?.value === 'high' ? r : undefined;
    });
    expect(rows.flow!.warning).toBe('value "high" does not fit value type number');
    // Not a number: the sum keeps the other state's value; the count counts it.
    expect([rows.total!.value, rows.dayCount!.value, rows.daySum!.value]).toEqual([100, 4, 10.5]);
    expect(pointsByKey(await storedPoints(t), twinId).flow).toEqual([2.5, 4, 'high']);
  });

  it('a device of another account with the same referenceId reaches nothing; an unrouted device costs nothing', async () => {
    const token = await login(t);
    const created = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/accounts',
      headers: { authorization: `Bearer ${token}` },
      payload: { title: 'Tenant B', parentId: t.rootAccountId },
    });
    expect(created.statusCode, created.body).toBe(201);
    const tenantB = created.json<{ id: string }>().id;
    const before = await pointCount();
    const other = await createBrokerConnector(t, { accountId: tenantB });
    await insertDevice(t, driverId, other.connectorId, 'stranger', 'PUMP-7', tenantB);
    const plain = await createBrokerConnector(t);
    await insertDevice(t, driverId, plain.connectorId, 'plain', null);
    await publish(other, 'stranger', { flow: 99 });
    await publish(plain, 'plain', { flow: 98 });
    await processedPackets(t, other.connectorId, 1);
    await processedPackets(t, plain.connectorId, 1);
    expect((await stateRows(t, twinId)).flow!.value).toBe('high');
    expect(await pointCount()).toBe(before);
  });

  it('period rollover by the timers: count 0, the previous day takes the completed count', async () => {
    const tomorrow = new Date(nextPeriodStart('day', Date.now(), ZONE) + 60_000);
    await t.services.stateTimers.runDue(new Date());
    const changed = await t.services.stateTimers.runDue(tomorrow);
    const rows = await stateRows(t, twinId);
    expect([rows.dayCount!.value, rows.daySum!.value, rows.previousDayCount!.value]).toEqual([0, 0, 4]);
    expect(rows.dayCount!.timestamp).toEqual(new Date(tomorrow.getTime() - 60_000));
    expect(changed.map((ch) => ch.key).sort()).toEqual(['dayCount', 'daySum', 'previousDayCount']);
    // Again in the same period: nothing due, nothing changes.
    expect(await t.services.stateTimers.runDue(new Date(tomorrow.getTime() + 1000))).toEqual([]);
  });
});

describe('state engine: values set through the API', () => {
  it('setValue refuses an unknown state and writes nothing for an equal value', async () => {
    await expect(
      t.services.stateEngine.setValue('0190a0a0-0000-7000-8000-000000000000', 1, new Date()),
    ).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
    const twinId = await insertTwin(t);
    const state = await insertState(t, twinId, 'manual', null, { valueType: 'boolean' });
    // Not announced through definitionsChanged: found by the reload on a miss.
    expect(await t.services.stateEngine.setValue(state, true, new Date())).toEqual({ changed: true });
    const before = await pointCount();
    expect(await t.services.stateEngine.setValue(state, true, new Date())).toEqual({ changed: false });
    expect(await pointCount()).toBe(before);
    expect(pointsByKey(await storedPoints(t), twinId)).toEqual({ manual: [1] });
  });
});

describe('state engine: the routing index without waiting', () => {
  it('answers with the index it has while a reload runs, then with the reloaded one', async () => {
    const engine = t.services.stateEngine;
    const before = await engine.routing();
    engine.definitionsChanged();
    expect(engine.loadedRouting()).toBe(before);
    const after = await waitFor(
      async () => {
        const now = engine.loadedRouting();
        return now !== before ? now : undefined;
      },
      10_000,
      { what: 'the reloaded index' },
    );
    expect(await engine.routing()).toBe(after);
  });
});

describe('state engine: cost on the ingest path', () => {
  it('adds no statement to a batch without routed states, and three (lock, write, points) to one with', async () => {
    const twinId = await insertTwin(t, { referenceId: 'COST-1' });
    await insertState(t, twinId, 'level', { type: 'dynamic-routing', stateKey: 'level' });
    t.services.stateEngine.definitionsChanged();
    await t.services.stateEngine.routing();
    const outcome = (referenceId: string | null, i: number): PacketOutcome => {
      const device = {
        id: '0190a0a0-0000-7000-8000-00000000000' + (referenceId ? '1' : '2'),
        accountId: t.rootAccountId,
        permissionScopeId: null,
        referenceId,
        driver: null,
      };
      const id = 10n ** 12n + BigInt(i);
      return {
        packet: {
          id,
          connectorId: device.id,
          deviceKey: 'x',
          payload: Buffer.from('{}'),
          source: 'test',
          receivedAt: new Date(),
        },
        device,
        status: 'parsed',
        error: null,
        updates: [
          {
            deviceId: device.id,
            accountId: device.accountId,
            permissionScopeId: null,
            packetId: id,
            receivedAt: new Date(),
            states: { level: i },
          },
        ],
      };
    };
    const client = new pg.Client({ connectionString: String(t.orm.config.get('clientUrl')) });
    await client.connect();
    try {
      const statements: string[] = [];
      const counting = {
        query: (query: string | { text: string }, params?: unknown[]) => {
          statements.push((typeof query === 'string' ? query : query.text).trim().split(/\s+/)[0]!);
          return client.query(query, params);
        },
      };
      await client.query('BEGIN');
      const unrouted = Array.from({ length: 500 }, (_, i) => outcome(null, i));
      expect(
        await t.services.stateEngine.inBatch(counting as unknown as pg.PoolClient, unrouted),
      ).toBeUndefined();
      expect(statements).toEqual([]);
      const routed = Array.from({ length: 500 }, (_, i) => outcome('COST-1', i));
      expect(await t.services.stateEngine.inBatch(counting as unknown as pg.PoolClient, routed)).toBeTypeOf(
        'function',
      );
      expect(statements).toEqual(['SELECT', 'UPDATE', 'COPY']);
    } finally {
      await client.query('ROLLBACK');
      await client.end();
    }
  });
});

describe('state engine: exactly once with the ingest cursor', () => {
  it('a batch that fails before its commit leaves nothing; replaying committed packets adds no point', async () => {
    const c = await createBrokerConnector(t);
    const deviceId = await insertDevice(t, driverId, c.connectorId, 'replayed', 'REPLAY-1');
    const twinId = await insertTwin(t, { referenceId: 'REPLAY-1' });
    const level = await insertState(t, twinId, 'level', { type: 'dynamic-routing', stateKey: 'level' });
    await insertState(t, twinId, 'levelCount', {
      type: 'time-aggregated',
      stateId: level,
      operation: 'count',
      period: 'year',
    });
    await insertState(t, twinId, 'raw', {
      type: 'connector',
      connectorId: c.connectorId,
      deviceId,
      stateKey: 'level',
    });
    t.services.stateEngine.definitionsChanged();
    await t.services.ingest.stop();

    const url = String(t.orm.config.get('clientUrl'));
    const store = new PacketStore(url, spoolPositionKey('replaying-test-node'), new Metrics());
    const pipeline = (commitHook: BatchCommitHook) =>
      new IngestPipeline({
        databaseUrl: url,
        packets: store,
        parsing: new DriverParsing(),
        connectors: { record: () => {}, write: async () => {} },
        metrics: new Metrics(),
        log: t.app.log,
        commitHook,
      });
    const pipelines: IngestPipeline[] = [];
    try {
      // A process that dies between the engine's work and the commit: the hook runs, the commit never happens.
      let attempts = 0;
      const crashing = pipeline(async (client, outcomes) => {
        await t.services.stateEngine.inBatch(client, outcomes);
        attempts++;
        throw new Error('power cut before COMMIT');
      });
      pipelines.push(crashing);
      await crashing.start();
      const cursorBefore = await cursor();
      // A position key of its own: these packets do not move the server's spool position.
      for (const level of [1, 2, 3])
        store.appendSpooled([{ ...packet(c.connectorId, 'replayed', { level }), seq: 0 }]);
      await store.flushed();
      await waitFor(async () => (attempts > 0 ? true : undefined));
      await crashing.stop();
      expect(await cursor()).toBe(cursorBefore);
      expect(pointsByKey(await storedPoints(t), twinId)).toEqual({});
      expect((await stateRows(t, twinId)).level!.value).toBeNull();

      const healthy = pipeline(t.services.stateEngine.inBatch);
      pipelines.push(healthy);
      await healthy.start();
      await processedPackets(t, c.connectorId, 3);
      await healthy.stop();
      const once = pointsByKey(await storedPoints(t), twinId);
      expect(once).toEqual({ level: [1, 2, 3], raw: [1, 2, 3], levelCount: [1, 2, 3] });

      // The cursor rolled back below the packets: they are processed again, without effect.
      const [first] = await sql<{ id: string }>(
        t,
        'SELECT min(id) AS id FROM packets WHERE connector_id = ?',
        [c.connectorId],
      );
      await sql(t, `UPDATE system_settings SET value = to_jsonb(?::text) WHERE key = 'ingest_cursor'`, [
        String(BigInt(first!.id) - 1n),
      ]);
      const replaying = pipeline(t.services.stateEngine.inBatch);
      pipelines.push(replaying);
      await replaying.start();
      await waitFor(async () => ((await cursor()) >= BigInt(first!.id) + 2n ? true : undefined));
      await replaying.stop();
      expect(pointsByKey(await storedPoints(t), twinId)).toEqual(once);
      const rows = await stateRows(t, twinId);
      expect([rows.level!.value, rows.levelCount!.value, rows.raw!.value]).toEqual([3, 3, 3]);
    } finally {
      for (const p of pipelines) await p.stop();
      await store.stop();
    }
  });
});

async function cursor(): Promise<bigint> {
  const [row] = await sql<{ v: string }>(
    t,
    `SELECT value #>> '{}' AS v FROM system_settings WHERE key = 'ingest_cursor'`,
  );
  return BigInt(row?.v ?? '0');
}
