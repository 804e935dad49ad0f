import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextPeriodStart, periodStart } from '../../server/src/states/engine/calendar.js';
import type { StateChange } from '../../server/src/states/engine/state-work.js';
import { TestClock } from './support/auth.js';
import {
  connectClient,
  createBrokerConnector,
  startBrokerApp,
  upTopic,
  type BrokerCredentials,
  type BrokerTestApp,
} from './support/broker.js';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { insertConnector, insertDriver, sql } from './support/ingest-fixtures.js';
import { insertDevice, insertState, stateRows } from './support/twin-fixtures.js';
import { waitFor } from './support/wait.js';

/**
 * Rule commands and triggers rules.test.ts leaves out, through the real path: values published
 * over MQTT to the embedded broker go through ingest and the state engine; event and location
 * rules fire on the committed changes; time rules run on the injectable clock.
 * - `aggregate-trigger` recomputes an aggregate state that is stale (created after its sources had
 *   their values) from an event rule, and rolls time-aggregated states over a day's end from a
 *   time rule while the state timers are not running;
 * - a location rule reading its position from two numeric states (latitude and longitude);
 * - `downlink` queues a downlink to a device when its rule fires, and asks for an fPort with bytes
 *   only where the device's connector carries one.
 */

const TIME_ZONE = 'Europe/Berlin';
const clock = new TestClock();
let t: BrokerTestApp;
let call: ReturnType<typeof caller>;
let gateway: BrokerCredentials;
let client: MqttClient;
let truckId: string;
let device: string;
const seen: StateChange[] = [];
let cursor = 0;

const source = (stateKey: string) => ({
  type: 'connector' as const,
  connectorId: gateway.connectorId,
  deviceId: device,
  stateKey,
});

/**
 * Publishes one packet and waits until each of its values changed the truck's state of that key
 * and every rule evaluation queued by then is done. The test's listener is registered after the
 * rule engine's, so once it has seen a change the rule engine has queued it: no sleep needed.
 * (Each publish must change every value it sends: an unchanged value makes no change notice.)
 */
async function publish(payload: Record<string, unknown>) {
  await client.publishAsync(upTopic(gateway, 'tracker-1'), JSON.stringify(payload), { qos: 1 });
  await waitFor(
    async () => {
      const fresh = seen.slice(cursor).filter((c) => c.twinId === truckId);
      const arrived = Object.entries(payload).every(([key, value]) =>
        fresh.some((c) => c.key === key && JSON.stringify(c.value) === JSON.stringify(value)),
      );
      return arrived ? true : undefined;
    },
    10_000,
    { what: `state changes for ${JSON.stringify(payload)}` },
  );
  cursor = seen.length;
  await t.services.ruleEngine.idle();
}

const value = async (key: string) => (await stateRows(t, truckId))[key]?.value;

interface LastRun {
  trigger: string;
  commands: Array<{ type: string; ok: boolean; result?: Record<string, unknown>; error?: string }>;
}

const lastRun = async (ruleId: string) =>
  expectStatus<{ lastRun: LastRun | null }>(await call('GET', `/xapi/v1/rules/${ruleId}`), 200).lastRun;

/** The rule's alarm messages, oldest first; each entry is closed once read, so every firing is a new entry. */
async function alarmMessages(ruleId: string): Promise<string[]> {
  const list = expectStatus<{ data: Array<{ id: string; message: string; source: { id: string } | null }> }>(
    await call('GET', '/xapi/v1/alarm-logs?pageSize=500'),
    200,
  );
  const mine = list.data.filter((a) => a.source?.id === ruleId);
  if (mine.length) await call('POST', '/xapi/v1/alarm-logs/close', { ids: mine.map((a) => a.id) });
  return mine.map((a) => a.message).reverse();
}

beforeAll(async () => {
  t = await startBrokerApp({ clock: clock.now });
  await sql(t, 'UPDATE accounts SET time_zone = ? WHERE id = ?', [TIME_ZONE, t.rootAccountId]);
  t.services.stateEngine.onStateChanges((changes) => seen.push(...changes));
  call = caller(t, bearer(await login(t)));
  gateway = await createBrokerConnector(t);
  client = await connectClient(`mqtt://127.0.0.1:${t.mqttPort}`, gateway);
  device = await insertDevice(t, await insertDriver(t), gateway.connectorId, 'tracker-1', null);
  truckId = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/digital-twins', { title: 'Truck 9' }),
    201,
  ).id;
  for (const key of ['load1', 'load2', 'refresh', 'lat', 'lon', 'reading', 'valve'])
    await insertState(t, truckId, key, source(key));
  t.services.stateEngine.definitionsChanged();
}, 60_000);

afterAll(async () => {
  await client?.endAsync();
  await t?.closeAll();
});

describe('aggregate-trigger from an event rule', () => {
  it('starts an aggregate from its sources, and recomputing it on request changes nothing then', async () => {
    await publish({ load1: 4, load2: 6 });
    const states = await stateRows(t, truckId);
    const create = (key: string, src: Record<string, unknown>) =>
      call('POST', `/xapi/v1/digital-twins/${truckId}/states`, { key, valueType: 'number', source: src });
    const total = expectStatus<{ id: string; value: unknown }>(
      await create('totalLoad', {
        type: 'aggregate',
        operation: 'sum',
        stateIds: [states.load1!.id, states.load2!.id],
      }),
      201,
    );
    const step = expectStatus<{ id: string }>(
      await create('loadStep', { type: 'aggregate', operation: 'difference', stateIds: [states.load1!.id] }),
      201,
    );
    // Created after its sources had values: it starts from them (not empty until a source changes).
    expect(total.value).toBe(10);
    expect(await value('totalLoad')).toBe(10);

    const ruleId = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/rules', {
        title: 'Recount on request',
        twinId: truckId,
        trigger: { type: 'event', conditions: [{ stateKey: 'refresh', operator: '==', value: 1 }] },
        commands: [
          { type: 'aggregate-trigger', stateKey: 'totalLoad' },
          { type: 'aggregate-trigger', stateId: step.id },
        ],
      }),
      201,
    ).id;
    // A value that does not meet the condition: the rule does not run.
    await publish({ refresh: 0 });
    expect(await lastRun(ruleId)).toBeNull();

    await publish({ refresh: 1 });
    expect(await value('totalLoad')).toBe(10);
    const run = await lastRun(ruleId);
    expect(run?.trigger).toBe('event');
    expect(run?.commands).toEqual([
      // Already current: recomputing writes nothing (no new timestamp, no point).
      { type: 'aggregate-trigger', ok: true, result: { stateId: total.id, changed: false } },
      // One value received since loadStep exists: no difference yet, and recomputing says so.
      { type: 'aggregate-trigger', ok: true, result: { stateId: step.id, changed: false } },
    ]);
    // From here on the engine keeps the aggregate current by itself.
    await publish({ load2: 7 });
    expect(await value('totalLoad')).toBe(11);
  });
});

describe('location rules with latitude and longitude in two states', () => {
  it('fire on enter and leave as both values move, and never on a half position', async () => {
    const area = {
      type: 'Polygon',
      coordinates: [
        [
          [13.3, 52.4],
          [13.5, 52.4],
          [13.5, 52.6],
          [13.3, 52.6],
          [13.3, 52.4],
        ],
      ],
    };
    const ruleId = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/rules', {
        title: 'Depot',
        twinId: truckId,
        trigger: { type: 'location', area, on: 'both', latitudeKey: 'lat', longitudeKey: 'lon' },
        commands: [
          { type: 'alarm', category: 'Geofence', message: '{{trigger}} at {{states.lat}},{{states.lon}}' },
        ],
      }),
      201,
    ).id;
    const moves: Array<[Record<string, number>, string[]]> = [
      // Only the latitude has arrived (inside the area's band): no position, no enter.
      [{ lat: 52.5 }, []],
      // The longitude arrives: the first whole position is inside.
      [{ lon: 13.4 }, ['enter at 52.5,13.4']],
      [{ lat: 52.51, lon: 13.41 }, []],
      [{ lat: 50.0, lon: 10.0 }, ['leave at 50,10']],
      // Latitude back in the band, longitude still far west: outside.
      [{ lat: 52.5 }, []],
      [{ lon: 13.4 }, ['enter at 52.5,13.4']],
      // Only the longitude leaves.
      [{ lon: 13.9 }, ['leave at 52.5,13.9']],
    ];
    const expected: string[] = [];
    for (const [i, [payload, fired]] of moves.entries()) {
      await publish(payload);
      expected.push(...fired);
      expect(await alarmMessages(ruleId), `after move ${i}: ${JSON.stringify(payload)}`).toEqual(expected);
    }
  });
});

describe('aggregate-trigger from a time rule', () => {
  it('rolls time-aggregated states over at midnight in the account time zone, without the state timers', async () => {
    const readingId = (await stateRows(t, truckId)).reading!.id;
    await insertState(t, truckId, 'readingsToday', {
      type: 'time-aggregated',
      stateId: readingId,
      operation: 'count',
      period: 'day',
    });
    await insertState(t, truckId, 'readingsYesterday', {
      type: 'time-aggregated',
      stateId: readingId,
      operation: 'sum',
      period: 'previous-day',
    });
    t.services.stateEngine.definitionsChanged();
    await publish({ reading: 5 });
    await publish({ reading: 7 });
    expect(await value('readingsToday')).toBe(2);
    expect(await value('readingsYesterday')).toBeNull();

    const ruleId = expectStatus<{ id: string; nextRunAt: string }>(
      await call('POST', '/xapi/v1/rules', {
        title: 'Close the day',
        twinId: truckId,
        trigger: { type: 'time', schedule: { cron: '0 0 * * *' } },
        commands: [
          { type: 'aggregate-trigger', stateKey: 'readingsToday' },
          { type: 'aggregate-trigger', stateKey: 'readingsYesterday' },
        ],
      }),
      201,
    ).id;
    const now = clock.now().getTime();
    const midnight = nextPeriodStart('day', periodStart('day', now, TIME_ZONE), TIME_ZONE);
    const scheduler = t.services.ruleScheduler;
    expect(await scheduler.runDue(clock.now())).toEqual([]);

    clock.advance(midnight - now + 30_000);
    // The token from the start has expired on the clock that moved on.
    call = caller(t, bearer(await login(t)));
    // Nothing moves the day's figures on by itself here (the state timers are not started).
    expect(await value('readingsToday')).toBe(2);
    expect(await scheduler.runDue(clock.now())).toEqual([ruleId]);
    await t.services.ruleEngine.idle();
    expect(await value('readingsToday')).toBe(0);
    expect(await value('readingsYesterday')).toBe(12);
    const rows = await stateRows(t, truckId);
    // The rollover happened at midnight, not when the rule ran.
    expect(rows.readingsYesterday!.timestamp?.getTime()).toBe(midnight);
    expect((await lastRun(ruleId))?.commands).toEqual([
      { type: 'aggregate-trigger', ok: true, result: { stateId: rows.readingsToday!.id, changed: true } },
      { type: 'aggregate-trigger', ok: true, result: { stateId: rows.readingsYesterday!.id, changed: true } },
    ]);
  });
});

describe('downlink from an event rule', () => {
  it('queues a downlink to the device when the rule fires', async () => {
    const ruleId = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/rules', {
        title: 'Close the valve',
        twinId: truckId,
        trigger: { type: 'event', conditions: [{ stateKey: 'valve', operator: '>', value: 100 }] },
        commands: [{ type: 'downlink', deviceId: device, fPort: 9, bytes: '01ff', confirmed: true }],
      }),
      201,
    ).id;
    const refused = await call('POST', '/xapi/v1/rules', {
      title: 'Both',
      twinId: truckId,
      trigger: { type: 'event', conditions: [{ stateKey: 'valve', operator: '>', value: 1 }] },
      commands: [{ type: 'downlink', deviceId: device, fPort: 9, bytes: '01', data: {} }],
    });
    expect(refused.statusCode).toBe(422);

    await publish({ valve: 150 });
    const run = await waitFor(async () => {
      const r = await lastRun(ruleId);
      return r?.commands.length ? r : undefined;
    });
    expect(run.commands[0]).toMatchObject({ type: 'downlink', ok: true });
    const list = expectStatus<{ data: Array<Record<string, unknown>> }>(
      await call('GET', `/xapi/v1/virtual-devices/${device}/downlinks`),
      200,
    );
    expect(list.data).toEqual([
      expect.objectContaining({
        id: run.commands[0]!.result!.downlinkId,
        fPort: 9,
        bytesHex: '01ff',
        confirmed: true,
        status: 'queued',
        createdBy: `rule:${ruleId}`,
      }),
    ]);
  });

  it('needs an fPort with bytes only where the device’s connector carries one', async () => {
    const chirpstack = await insertConnector(t, t.rootAccountId, 'chirpstack-uplink');
    const lorawan = await insertDevice(t, await insertDriver(t), chirpstack, '0303030303030303', null);
    const save = (deviceId: string, port: { fPort?: number }) =>
      call('POST', '/xapi/v1/rules', {
        title: 'Open the valve',
        twinId: truckId,
        trigger: { type: 'event', conditions: [{ stateKey: 'valve', operator: '<', value: 0 }] },
        commands: [{ type: 'downlink', deviceId, ...port, bytes: '02' }],
      });

    const refused = await save(lorawan, {});
    expect(refused.statusCode, refused.body).toBe(422);
    const { error } = refused.json<{ error: { code: string; message: string; details: unknown[] } }>();
    expect(error.message).toContain('fPort is required with bytes');
    expect(error).toMatchObject({
      code: 'INVALID_COMMAND',
      details: [{ path: '/commands/0/fPort', keyword: 'required', params: { missingProperty: 'fPort' } }],
    });
    expectStatus(await save(lorawan, { fPort: 4 }), 201);

    // The embedded broker's topics carry no port: none is needed, and one given is still kept.
    expectStatus(await save(device, {}), 201);
    expectStatus(await save(device, { fPort: 4 }), 201);
  });
});
