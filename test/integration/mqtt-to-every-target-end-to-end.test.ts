import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextPeriodStart } from '../../server/src/states/engine/calendar.js';
import { runMosquitto, startBrokerApp, type BrokerTestApp } from './support/broker.js';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { startInfluxDb, type InfluxDb } from './support/influxdb.js';
import { sql } from './support/ingest-fixtures.js';
import { influxPoints, sortSeen, victoriaPoints, type SeenPoint } from './support/target-readback.js';
import { startVictoriaMetrics, type VictoriaMetrics } from './support/victoria-metrics.js';
import { waitFor } from './support/wait.js';

/**
 * End to end with real parts: `mosquitto_pub` → the server's broker →
 * packet → device (with a referenceId) → dynamic data routing → twin states → aggregate and
 * time-aggregated states → points in PostgreSQL, in Debian's influxd (v1 API) and in
 * victoria-metrics (v2 write API), each started here on a free port and read back through its
 * own API. Everything is configured through the XAPI, as a user would.
 */
let t: BrokerTestApp;
let influx: InfluxDb;
let victoria: VictoriaMetrics;
let call: ReturnType<typeof caller>;
const ZONE = 'Europe/Berlin';
const INFLUX_DB = 'stellwerk_e2e';

beforeAll(async () => {
  [influx, victoria] = await Promise.all([startInfluxDb(), startVictoriaMetrics()]);
  t = await startBrokerApp({
    env: {
      STELLWERK_TIMESERIES_TARGETS: `postgres, influxdb-v1+${influx.url}/${INFLUX_DB}, victoria-metrics+${victoria.url}`,
    },
  });
  // The writer is a lifecycle part: tests start it themselves (createTestApp starts only ingest).
  await t.services.timeseries.runtime.start();
  call = caller(t, bearer(await login(t)));
});

afterAll(async () => {
  await t?.services.timeseries.runtime.stop();
  await t?.closeAll();
  await Promise.all([influx?.stop(), victoria?.stop()]);
});

const created = async <T = { id: string }>(url: string, body: unknown) =>
  expectStatus<T>(await call('POST', url, body), 201);

/** Waits out the last seconds of a local day, so that the values published together share one day. */
async function clearOfMidnight() {
  const left = nextPeriodStart('day', Date.now(), ZONE) - Date.now();
  if (left < 20_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

describe('mosquitto_pub → twin states → points in every target', () => {
  const ids: Record<string, string> = {};
  let twinId: string;
  let connectorId: string;
  let expected: SeenPoint[];

  it('is configured through the XAPI: connector, driver, device and twin sharing a referenceId, five states', async () => {
    expectStatus(await call('PUT', `/xapi/v1/accounts/${t.rootAccountId}`, { timeZone: ZONE }), 200);
    const connector = await created<{ id: string; credentials: { username: string; password: string } }>(
      '/xapi/v1/connectors',
      { type: 'mqtt-broker', title: 'Pump house gateway' },
    );
    connectorId = connector.id;
    ids.username = connector.credentials.username;
    ids.password = connector.credentials.password;
    const driver = await created('/xapi/v1/device-drivers', {
      title: 'Flow meter (JSON)',
      parser: { type: 'json' },
    });
    await created('/xapi/v1/virtual-devices', {
      device_id: 'pump-7-meter',
      title: 'Pump 7 meter',
      connectorId,
      deviceDriverId: driver.id,
      referenceId: 'PUMP-7',
    });
    twinId = (await created('/xapi/v1/digital-twins', { title: 'Pump 7', referenceId: 'PUMP-7' })).id;
    const state = async (key: string, source: Record<string, unknown>) =>
      (ids[key] = (
        await created(`/xapi/v1/digital-twins/${twinId}/states`, { key, unit: 'm³/h', source })
      ).id);
    await state('inflow', { type: 'dynamic-routing', stateKey: 'inflow' });
    await state('outflow', { type: 'dynamic-routing', stateKey: 'outflow' });
    await state('throughput', { type: 'aggregate', operation: 'sum', stateIds: [ids.inflow, ids.outflow] });
    await state('inflowToday', {
      type: 'time-aggregated',
      stateId: ids.inflow,
      operation: 'sum',
      period: 'day',
    });
    await state('readingsToday', {
      type: 'time-aggregated',
      stateId: ids.inflow,
      operation: 'count',
      period: 'day',
    });
  });

  it('turns four mosquitto_pub messages into twin state values (GET /xapi/v1/states/:id)', async () => {
    await clearOfMidnight();
    const readings = [
      { inflow: 2.5, outflow: 1 },
      { inflow: 4, outflow: 1 },
      { inflow: 4, outflow: 3.25 },
      { inflow: 0.5, outflow: 3.25 },
    ];
    for (const reading of readings) {
      const run = await runMosquitto('mosquitto_pub', [
        ...['-h', '127.0.0.1', '-p', String(t.mqttPort), '-u', ids.username!, '-P', ids.password!],
        ...['-V', 'mqttv311', '-q', '1', '-t', `connectors/${connectorId}/devices/pump-7-meter/up`],
        ...['-m', JSON.stringify(reading)],
      ]);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
    }
    const stateOf = async (key: string) =>
      expectStatus<{ value: unknown; timestamp: string | null; warning: string | null }>(
        await call('GET', `/xapi/v1/states/${ids[key]}`),
        200,
      );
    await waitFor(async () => ((await stateOf('readingsToday')).value === 4 ? true : undefined), 15_000, {
      what: 'the fourth reading to be counted',
    });
    // Arrival times of the four packets: the times every point must carry.
    const at = (
      await sql<{ received_at: string }>(
        t,
        `SELECT to_json(received_at) #>> '{}' AS received_at FROM packets WHERE connector_id = ? ORDER BY id`,
        [connectorId],
      )
    ).map((p) => new Date(p.received_at).getTime());
    expect(at).toHaveLength(4);
    const values = Object.fromEntries(
      await Promise.all(
        ['inflow', 'outflow', 'throughput', 'inflowToday', 'readingsToday'].map(async (key) => {
          const s = await stateOf(key);
          const time = s.timestamp === null ? null : Date.parse(s.timestamp);
          return [key, { value: s.value, time, warning: s.warning }] as const;
        }),
      ),
    );
    expect(values).toEqual({
      inflow: { value: 0.5, time: at[3], warning: null },
      // Unchanged by the fourth reading: its timestamp is the last change.
      outflow: { value: 3.25, time: at[2], warning: null },
      throughput: { value: 3.75, time: at[3], warning: null },
      inflowToday: { value: 11, time: at[3], warning: null },
      readingsToday: { value: 4, time: at[3], warning: null },
    });
    const p = (key: string, i: number, value: number): SeenPoint => ({ key, time: at[i]!, value });
    expected = sortSeen([
      // A repeated value is no change: no point.
      p('inflow', 0, 2.5),
      p('inflow', 1, 4),
      p('inflow', 3, 0.5),
      p('outflow', 0, 1),
      p('outflow', 2, 3.25),
      // Both sources of one reading change together: one value of the sum, not an intermediate one.
      p('throughput', 0, 3.5),
      p('throughput', 1, 5),
      p('throughput', 2, 7.25),
      p('throughput', 3, 3.75),
      // Every received value counts, repeats included.
      p('inflowToday', 0, 2.5),
      p('inflowToday', 1, 6.5),
      p('inflowToday', 2, 10.5),
      p('inflowToday', 3, 11),
      p('readingsToday', 0, 1),
      p('readingsToday', 1, 2),
      p('readingsToday', 2, 3),
      p('readingsToday', 3, 4),
    ]);
  });

  it('delivers every value change to each target: the outbox drains', async () => {
    await waitFor(
      async () =>
        (await t.services.timeseries.writer.backlog()).every((b) => b.rows === 0) ? true : undefined,
      20_000,
      { what: 'postgres, influxdb-v1 and victoria-metrics to receive the outbox' },
    );
  });

  it('PostgreSQL (primary), read through POST /xapi/v1/timeseries/query', async () => {
    const answer = expectStatus<{ rows: Array<[string, string, number]>; meta: { target: string } }>(
      await call('POST', '/xapi/v1/timeseries/query', {
        query: `SELECT time, state.key, value WHERE twin.id = '${twinId}' AND time >= now() - 1h`,
      }),
      200,
    );
    expect(answer.meta.target).toBe('postgres');
    const seen = answer.rows.map(([time, key, value]) => ({ key, time: Date.parse(time), value }));
    expect(sortSeen(seen)).toEqual(expected);
  });

  it('InfluxDB 1.x, read through its /query API', async () => {
    const seen = await influxPoints(influx.url, INFLUX_DB, { tag: 'twin_id', value: twinId });
    expect(sortSeen(seen)).toEqual(expected);
  });

  it('VictoriaMetrics, read through its /api/v1/export API', async () => {
    const seen = await waitFor(
      async () => {
        await victoria.flush();
        const points = await victoriaPoints(victoria.url, { name: 'twin_id', value: twinId });
        return points.length >= expected.length ? points : undefined;
      },
      10_000,
      { what: 'victoria-metrics to make the samples searchable' },
    );
    expect(sortSeen(seen)).toEqual(expected);
  });
});
