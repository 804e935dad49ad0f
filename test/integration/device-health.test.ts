import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dailySlotMs, DAY_MS } from '../../server/src/devices/health/health-evaluation.js';
import { TestClock } from './support/auth.js';
import {
  connectClient,
  createBrokerConnector,
  startBrokerApp,
  upTopic,
  type BrokerCredentials,
  type BrokerTestApp,
} from './support/broker.js';
import { bearer, caller, errorCode, expectStatus, login } from './support/identity.js';
import { waitFor } from './support/wait.js';

/**
 * Device health end to end: packets published over MQTT to the real broker go through ingest;
 * the prompt queue evaluates devices whose health is still Unknown; the scheduler's rounds are
 * called with explicit times (the injectable clock), so slots and schedules are tested without
 * sleeping; manual rules and alarm entries go through the XAPI.
 */

const clock = new TestClock();
let t: BrokerTestApp;
let call: ReturnType<typeof caller>;
let gateway: BrokerCredentials;
let client: MqttClient;
let driverId: string;
let sensorId: string;

interface Health {
  deviceId: string;
  healthState: string;
  healthReason: string | null;
  healthCheckedAt: string | null;
  healthNextCheckAt: string | null;
  mode: 'default' | 'manual';
  config: { rules: Array<{ state: string; value?: unknown }>; alarmOnChange?: boolean } | null;
  schedule: { cron?: string; intervalSeconds?: number } | null;
  dailySlot: string;
}

interface Alarm {
  category: string;
  message: string;
  reference: { type: string; id: string } | null;
  details: { previous?: string; current?: string };
  occurrenceCount: number;
  status: string;
  closeReason: string | null;
}

const health = async (id: string) =>
  expectStatus<Health>(await call('GET', `/xapi/v1/virtual-devices/${id}/health`), 200);

const healthAlarms = async (id: string) =>
  expectStatus<{ data: Alarm[] }>(
    await call(
      'GET',
      `/xapi/v1/alarm-logs?category=${encodeURIComponent('Gerätezustand')}&referenceId=${id}&pageSize=100`,
    ),
    200,
  ).data;

async function createDevice(deviceKey: string): Promise<string> {
  return expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/virtual-devices', {
      device_id: deviceKey,
      title: `Sensor ${deviceKey}`,
      connectorId: gateway.connectorId,
      deviceDriverId: driverId,
    }),
    201,
  ).id;
}

/** Publishes through the broker and waits until the device state holds the value (committed). */
async function publish(deviceKey: string, deviceId: string, payload: { temperature: number }) {
  await client.publishAsync(upTopic(gateway, deviceKey), JSON.stringify(payload), { qos: 1 });
  await waitFor(
    async () => {
      const states = expectStatus<{ data: Array<{ key: string; value: unknown }> }>(
        await call('GET', `/xapi/v1/virtual-devices/${deviceId}/states`),
        200,
      ).data;
      return states.find((s) => s.key === 'temperature')?.value === payload.temperature ? true : undefined;
    },
    10_000,
    { what: `temperature ${payload.temperature} on ${deviceKey}` },
  );
}

const runDue = (at: Date) => t.services.deviceHealthEvaluator.runDue(at);

beforeAll(async () => {
  t = await startBrokerApp({ clock: clock.now });
  call = caller(t, bearer(await login(t)));
  gateway = await createBrokerConnector(t);
  client = await connectClient(`mqtt://127.0.0.1:${t.mqttPort}`, gateway);
  driverId = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/device-drivers', {
      title: 'Thermometer',
      targetVariables: [{ key: 'temperature', type: 'number', unit: '°C' }],
      healthConfig: {
        rules: [{ state: 'temperature', operator: '>', value: 80, result: 'Unhealthy' }],
        alarmOnChange: true,
      },
    }),
    201,
  ).id;
  sensorId = await createDevice('sensor-1');
  // The prompt evaluation runs off the ingest path, as in production (lifecycle parts are not started in tests).
  await t.services.deviceHealthQueue.start();
}, 60_000);

afterAll(async () => {
  await t?.services.deviceHealthQueue.stop();
  await client?.endAsync();
  await t?.closeAll();
});

describe('device health', () => {
  it('is Unknown without packets; the scheduler places the device in its daily slot without evaluating it', async () => {
    const before = await health(sensorId);
    expect(before).toMatchObject({ healthState: 'Unknown', healthCheckedAt: null, mode: 'default' });
    expect(before.config?.rules).toHaveLength(1);
    const round = await runDue(clock.now());
    expect(round.placed).toBeGreaterThanOrEqual(1);
    expect(round.evaluated).not.toContain(sensorId);
    const placed = await health(sensorId);
    expect(placed.healthState).toBe('Unknown');
    expect(placed.healthCheckedAt).toBeNull();
    const next = new Date(placed.healthNextCheckAt!).getTime();
    expect(next % DAY_MS).toBe(dailySlotMs(sensorId));
    expect(next - Date.now()).toBeLessThanOrEqual(DAY_MS);
  });

  it('turns from Unknown to evaluated soon after the first MQTT packet, without waiting for the slot', async () => {
    const slot = (await health(sensorId)).healthNextCheckAt;
    await publish('sensor-1', sensorId, { temperature: 21 });
    const evaluated = await waitFor(
      async () => {
        const h = await health(sensorId);
        return h.healthState !== 'Unknown' ? h : undefined;
      },
      5_000,
      { what: 'a prompt health evaluation' },
    );
    expect(evaluated).toMatchObject({ healthState: 'Healthy', healthReason: 'no rule matched' });
    expect(evaluated.healthCheckedAt).not.toBeNull();
    // The prompt evaluation does not move the daily slot.
    expect(evaluated.healthNextCheckAt).toBe(slot);
    // A first Healthy is no news: no alarm entry.
    expect(await healthAlarms(sensorId)).toHaveLength(0);
    const listed = expectStatus<{
      data: Array<{ id: string; healthState: string; healthCheckedAt: string }>;
    }>(await call('GET', `/xapi/v1/virtual-devices?sort=-healthState&pageSize=100`), 200).data.find(
      (d) => d.id === sensorId,
    );
    expect(listed).toMatchObject({ healthState: 'Healthy', healthCheckedAt: evaluated.healthCheckedAt });
  });

  it('evaluates the default rule in its slot and not before: Unhealthy when a rule on a state holds', async () => {
    await publish('sensor-1', sensorId, { temperature: 95 });
    // Already known: later packets do not trigger evaluations (default rules wait for the slot).
    await t.services.deviceHealthQueue.drain();
    expect((await health(sensorId)).healthState).toBe('Healthy');
    const slot = new Date((await health(sensorId)).healthNextCheckAt!);

    const early = await runDue(new Date(slot.getTime() - 1));
    expect(early.evaluated).not.toContain(sensorId);
    expect((await health(sensorId)).healthState).toBe('Healthy');

    const due = await runDue(slot);
    expect(due.evaluated).toContain(sensorId);
    const after = await health(sensorId);
    expect(after).toMatchObject({
      healthState: 'Unhealthy',
      healthReason: 'rule 0: temperature > 80',
      healthCheckedAt: slot.toISOString(),
      healthNextCheckAt: new Date(slot.getTime() + DAY_MS).toISOString(),
    });
    const detail = expectStatus<{ healthState: string }>(
      await call('GET', `/xapi/v1/virtual-devices/${sensorId}`),
      200,
    );
    expect(detail.healthState).toBe('Unhealthy');
    // alarmOnChange: the change is in the alarm log, category Gerätezustand, referencing the device.
    const alarms = await healthAlarms(sensorId);
    expect(alarms).toHaveLength(1);
    expect(alarms[0]).toMatchObject({
      category: 'Gerätezustand',
      reference: { type: 'virtualDevice', id: sensorId },
      details: { previous: 'Healthy', current: 'Unhealthy' },
    });
    // A second round at the same time finds nothing due for this device.
    expect((await runDue(slot)).evaluated).not.toContain(sensorId);
  });

  it('editing a default makes it manual: it keeps its daily time; an own schedule is kept as given', async () => {
    const slot = new Date((await health(sensorId)).healthNextCheckAt!);
    const edited = expectStatus<Health>(
      await call('PUT', `/xapi/v1/virtual-devices/${sensorId}/health`, {
        rules: [{ state: 'temperature', operator: '>', value: 100, result: 'Unhealthy' }],
      }),
      200,
    );
    expect(edited).toMatchObject({ mode: 'manual', schedule: { intervalSeconds: 86_400 } });
    expect(edited.config).toMatchObject({ rules: [{ value: 100 }], alarmOnChange: true });
    // Pinned as every 24 h from its slot: the same time of day as before the edit.
    expect(new Date(edited.healthNextCheckAt!).getTime() % DAY_MS).toBe(slot.getTime() % DAY_MS);
    // The driver's rules are untouched (other devices keep the default).
    const driver = expectStatus<{ healthConfig: { rules: Array<{ value: unknown }> } }>(
      await call('GET', `/xapi/v1/device-drivers/${driverId}`),
      200,
    );
    expect(driver.healthConfig.rules[0]!.value).toBe(80);

    const saved = clock.now();
    const every15 = expectStatus<Health>(
      await call('PUT', `/xapi/v1/virtual-devices/${sensorId}/health`, {
        schedule: { intervalSeconds: 900 },
      }),
      200,
    );
    expect(every15.config?.rules[0]!.value).toBe(100);
    const next = new Date(every15.healthNextCheckAt!);
    expect(Math.abs(next.getTime() - (saved.getTime() + 900_000))).toBeLessThan(5_000);

    expect((await runDue(new Date(next.getTime() - 1))).evaluated).not.toContain(sensorId);
    expect((await runDue(next)).evaluated).toContain(sensorId);
    const recovered = await health(sensorId);
    expect(recovered).toMatchObject({ healthState: 'Healthy', mode: 'manual' });
    // Kept on its own 15-minute grid, not moved back to the daily slot.
    expect(recovered.healthNextCheckAt).toBe(new Date(next.getTime() + 900_000).toISOString());
    const alarms = await healthAlarms(sensorId);
    // The problem and its recovery are one entry, closed by the recovery.
    expect(alarms.map((a) => [a.details.current, a.occurrenceCount, a.status, a.closeReason])).toEqual([
      ['Healthy', 2, 'closed', 'cleared'],
    ]);

    const cron = expectStatus<Health>(
      await call('PUT', `/xapi/v1/virtual-devices/${sensorId}/health`, {
        schedule: { cron: '0 3 * * *' },
        alarmOnChange: false,
      }),
      200,
    );
    expect(cron.schedule).toEqual({ cron: '0 3 * * *' });
    expect(cron.healthNextCheckAt).toMatch(/T03:00:00\.000Z$/);
    expect(cron.config?.alarmOnChange).toBe(false);
  });

  it('without alarmOnChange a change writes no alarm entry; evaluate on demand keeps the schedule', async () => {
    await call('PUT', `/xapi/v1/virtual-devices/${sensorId}/health`, {
      rules: [{ state: 'temperature', operator: '>=', value: 95, result: 'Warning' }],
    });
    const before = await health(sensorId);
    const alarmsBefore = (await healthAlarms(sensorId)).length;
    const now = expectStatus<Health>(
      await call('POST', `/xapi/v1/virtual-devices/${sensorId}/health/evaluate`),
      200,
    );
    expect(now.healthState).toBe('Warning');
    expect(now.healthNextCheckAt).toBe(before.healthNextCheckAt);
    expect(await healthAlarms(sensorId)).toHaveLength(alarmsBefore);
  });

  it("going back to the default puts the driver's rules in the daily slot again", async () => {
    const reset = expectStatus<Health>(
      await call('DELETE', `/xapi/v1/virtual-devices/${sensorId}/health`),
      200,
    );
    expect(reset).toMatchObject({ mode: 'default', schedule: null });
    expect(reset.config?.rules[0]!.value).toBe(80);
    expect(new Date(reset.healthNextCheckAt!).getTime() % DAY_MS).toBe(dailySlotMs(sensorId));
  });

  it('refuses bad rules and schedules with 422, unknown devices with 404', async () => {
    const put = (body: unknown, id = sensorId) => call('PUT', `/xapi/v1/virtual-devices/${id}/health`, body);
    const wrongOperator = await put({
      rules: [{ state: 'temperature', operator: 'contains', value: 'x', result: 'X' }],
    });
    expect(wrongOperator.statusCode).toBe(422);
    expect(errorCode(wrongOperator)).toBe('INVALID_HEALTH_CONFIG');
    const unknownState = await put({ rules: [{ state: 'humidity', operator: 'exists', result: 'X' }] });
    expect(errorCode(unknownState)).toBe('INVALID_HEALTH_CONFIG');
    const raw = await put({
      rules: [{ state: '_raw', operator: 'contains', value: 'FAULT', result: 'Critical' }],
    });
    expect(raw.statusCode).toBe(200);
    const badCron = await put({ schedule: { cron: 'every day' } });
    expect(badCron.statusCode).toBe(422);
    expect(errorCode(badCron)).toBe('INVALID_HEALTH_SCHEDULE');
    const both = await put({ schedule: { cron: '0 3 * * *', intervalSeconds: 600 } });
    expect(errorCode(both)).toBe('INVALID_HEALTH_SCHEDULE');
    expect((await put({ schedule: { intervalSeconds: 5 } })).statusCode).toBe(400);
    const missing = await put({}, '0194d2a0-0000-7000-8000-000000000000');
    expect(missing.statusCode).toBe(404);
  });

  it('many devices: a round evaluates only the due ones, each in its own slot', async () => {
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => createDevice(`bulk-${i}`)));
    await runDue(clock.now());
    const slots = new Map<string, number>();
    for (const id of ids) slots.set(id, new Date((await health(id)).healthNextCheckAt!).getTime());
    expect(new Set(slots.values()).size).toBe(20);
    const ordered = [...slots.entries()].sort((a, b) => a[1] - b[1]);
    const [midId, midSlot] = ordered[9]!;
    const round = await runDue(new Date(midSlot));
    const bulkEvaluated = round.evaluated.filter((id) => slots.has(id));
    expect(bulkEvaluated.sort()).toEqual(
      ordered
        .slice(0, 10)
        .map(([id]) => id)
        .sort(),
    );
    expect(bulkEvaluated).toContain(midId);
    // Never seen: evaluated, but Unknown is the only health such a device can have.
    expect((await health(midId)).healthState).toBe('Unknown');
  });

  it('stores a batch of verdicts without waiting for a device another transaction holds, then that one too', async () => {
    const ids = await Promise.all(Array.from({ length: 6 }, (_, i) => createDevice(`locked-${i}`)));
    const held = ids[2]!;
    const checkedAt = async () => {
      const rows = await t.orm.em
        .fork()
        .getConnection()
        .execute<Array<{ id: string; health_checked_at: Date | null }>>(
          'SELECT id, health_checked_at FROM virtual_devices WHERE id IN (?)',
          [ids],
        );
      return new Map(rows.map((r) => [r.id, r.health_checked_at]));
    };
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // Another writer (as the ingest's lastSeen update would) holds one device's row.
    const holder = t.orm.em.fork().transactional(async (em) => {
      await em
        .getConnection()
        .execute(
          'SELECT id FROM virtual_devices WHERE id = ? FOR UPDATE',
          [held],
          'all',
          em.getTransactionContext(),
        );
      locked();
      await released;
    });
    await isLocked;
    const evaluation = t.services.deviceHealthEvaluator.evaluate(ids, clock.now(), false);
    try {
      await waitFor(
        async () => {
          const checked = await checkedAt();
          return ids.every((id) => id === held || checked.get(id)) ? true : undefined;
        },
        10_000,
        { what: 'the verdicts of the devices not held' },
      );
      expect((await checkedAt()).get(held)).toBeNull();
    } finally {
      release();
      await holder;
    }
    const outcomes = await evaluation;
    expect(outcomes.map((o) => o.deviceId).sort()).toEqual([...ids].sort());
    expect((await checkedAt()).get(held)).not.toBeNull();
  });
});
