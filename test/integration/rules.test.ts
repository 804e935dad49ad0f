import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
import { insertConnector, insertDriver } from './support/ingest-fixtures.js';
import { RecordingDispatch } from './support/recording-dispatch.js';
import { insertDevice, insertState, stateRows } from './support/twin-fixtures.js';
import { waitFor } from './support/wait.js';

/**
 * Rules end to end inside the server: values published over MQTT to the real broker go through
 * ingest and the state engine; event and location rules fire on the committed changes; time rules
 * run on the injectable clock. Outgoing messages are handed to a recording OutgoingDispatch.
 */

const clock = new TestClock();
let t: BrokerTestApp;
let call: ReturnType<typeof caller>;
let gateway: BrokerCredentials;
let client: MqttClient;
const recorder = new RecordingDispatch();
let siteId: string;
let truckId: string;
const states: Record<string, string> = {};
const out: Record<string, string> = {};

interface Alarm {
  id: string;
  message: string;
  occurrenceCount: number;
  category: string;
  reference: { type: string; id: string } | null;
  source: { kind: string; id: string } | null;
}

const publish = async (payload: Record<string, unknown>) => {
  await client.publishAsync(upTopic(gateway, 'tracker-1'), JSON.stringify(payload), { qos: 1 });
};

/** Waits until the twin state has the value and every queued rule evaluation is done. */
async function settled(key: string, value: unknown) {
  await waitFor(
    async () =>
      JSON.stringify((await stateRows(t, truckId))[key]?.value) === JSON.stringify(value) ? true : undefined,
    10_000,
    {
      what: `${key} = ${JSON.stringify(value)}`,
    },
  );
  // The engine's listener runs right after the commit that made the value visible: let it queue.
  await new Promise((resolve) => setTimeout(resolve, 50));
  await t.services.ruleEngine.idle();
}

async function alarmsOfRule(ruleId: string): Promise<Alarm[]> {
  const list = expectStatus<{ data: Alarm[] }>(await call('GET', `/xapi/v1/alarm-logs?pageSize=500`), 200);
  return list.data.filter((a) => a.source?.id === ruleId);
}

beforeAll(async () => {
  t = await startBrokerApp({ clock: clock.now, env: { STELLWERK_PUBLIC_URL: 'https://stellwerk.example' } });
  t.services.outgoing.use(recorder);
  call = caller(t, bearer(await login(t)));
  gateway = await createBrokerConnector(t);
  client = await connectClient(`mqtt://127.0.0.1:${t.mqttPort}`, gateway);
  const device = await insertDevice(t, await insertDriver(t), gateway.connectorId, 'tracker-1', null);
  siteId = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/digital-twins', { title: 'Depot' }),
    201,
  ).id;
  truckId = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/digital-twins', {
      title: 'Truck 7',
      parentId: siteId,
      customProperties: { plate: 'B-ST 7' },
    }),
    201,
  ).id;
  const source = (stateKey: string) => ({
    type: 'connector' as const,
    connectorId: gateway.connectorId,
    deviceId: device,
    stateKey,
  });
  states.temperature = await insertState(t, truckId, 'temperature', source('temperature'));
  states.location = await insertState(t, truckId, 'location', source('location'), { valueType: 'object' });
  states.overheated = await insertState(t, truckId, 'overheated', null, { valueType: 'boolean' });
  t.services.stateEngine.definitionsChanged();
  out.webhook = await insertConnector(t, t.rootAccountId, 'webhook-out');
  out.smtp = await insertConnector(t, t.rootAccountId, 'smtp-mail');
  out.mqtt = await insertConnector(t, t.rootAccountId, 'mqtt-out');
}, 60_000);

afterAll(async () => {
  await client?.endAsync();
  await t?.closeAll();
});

describe('event rules', () => {
  let ruleId: string;

  it('fire on an MQTT-published value: set-state, alarm entry and outgoing commands with placeholders', async () => {
    ruleId = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/rules', {
        title: 'Too hot',
        twinId: truckId,
        trigger: { type: 'event', conditions: [{ stateKey: 'temperature', operator: '>', value: 30 }] },
        commands: [
          { type: 'set-state', stateKey: 'overheated', value: true },
          {
            type: 'alarm',
            category: 'Temperatur',
            message: '{{twin.title}} is at {{states.temperature}} °C',
          },
          {
            type: 'webhook',
            connectorId: out.webhook,
            body: {
              twin: '{{twin.id}}',
              where: '{{twin.hierarchy}}',
              plate: '{{twin.properties.plate}}',
              link: '{{twinlink}}',
              t: '{{states.temperature}}',
            },
          },
          {
            type: 'email',
            connectorId: out.smtp,
            to: ['ops@example.test'],
            subject: 'Hot: {{twin.title}}',
            body: 'See {{twinlink}}',
          },
          {
            type: 'mqtt-publish',
            connectorId: out.mqtt,
            topic: 'alerts/{{twin.id}}',
            body: '{{states.temperature}}',
          },
        ],
      }),
      201,
    ).id;

    await publish({ temperature: 35 });
    await settled('temperature', 35);
    await settled('overheated', true);
    const alarms = await alarmsOfRule(ruleId);
    expect(alarms).toHaveLength(1);
    expect(alarms[0]).toMatchObject({
      category: 'Temperatur',
      message: 'Truck 7 is at 35 °C',
      reference: { type: 'digitalTwin', id: truckId },
    });
    const sent = recorder.from('rule', ruleId);
    expect(sent.map((s) => s.connectorId)).toEqual([out.webhook, out.smtp, out.mqtt]);
    // The webhook and the mail carry the alarm the run raised: severity and console link.
    const alarmLink = `https://stellwerk.example/#/alarms?id=${alarms[0]!.id}`;
    expect(sent[0]!.message.body).toEqual({
      twin: truckId,
      where: 'Depot / Truck 7',
      plate: 'B-ST 7',
      link: `https://stellwerk.example/#/twins/${truckId}`,
      t: '35',
      alarm: { id: alarms[0]!.id, severity: 'warning', occurrenceCount: 1, link: alarmLink },
    });
    expect(sent[1]!.message).toMatchObject({
      subject: 'Hot: Truck 7',
      body: `See https://stellwerk.example/#/twins/${truckId}\n\nSeverity: warning\nAlarm: ${alarmLink}`,
      to: ['ops@example.test'],
    });
    expect(sent[2]!.message).toMatchObject({ topic: `alerts/${truckId}`, body: '35' });
    const rule = expectStatus<{ lastRun: { commands: Array<{ ok: boolean }> } }>(
      await call('GET', `/xapi/v1/rules/${ruleId}`),
      200,
    );
    expect(rule.lastRun.commands.every((c) => c.ok)).toBe(true);
  });

  it('does not fire again while the conditions keep holding; fires again after they stopped, counted on the open entry', async () => {
    await publish({ temperature: 36 });
    await settled('temperature', 36);
    expect(await alarmsOfRule(ruleId)).toHaveLength(1);
    await publish({ temperature: 20 });
    await settled('temperature', 20);
    await publish({ temperature: 40 });
    await settled('temperature', 40);
    expect((await alarmsOfRule(ruleId)).map((a) => [a.message, a.occurrenceCount])).toEqual([
      ['Truck 7 is at 40 °C', 2],
    ]);
  });

  it('sees a dip and return that were both committed before it looked, with the values of each step', async () => {
    await publish({ temperature: 45 });
    await settled('temperature', 45);
    // Both changes reach the engine together, after the stored value is 45 already (a busy moment):
    // the conditions stopped at 20 and started again at 42, and the entry says 42.
    const change = (value: number) => ({
      stateId: states.temperature!,
      twinId: truckId,
      accountId: t.rootAccountId,
      key: 'temperature',
      value,
      timestamp: clock.now(),
      warning: null,
    });
    t.services.ruleEngine.onStateChanges([change(20), change(42)]);
    await t.services.ruleEngine.idle();
    expect((await alarmsOfRule(ruleId)).map((a) => [a.message, a.occurrenceCount])).toEqual([
      ['Truck 7 is at 42 °C', 3],
    ]);
  });
});

describe('location rules', () => {
  it('fire on enter and on leave of a polygon and of a circle as the location state moves', async () => {
    const polygon = {
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
    const circle = {
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [13.0, 52.0] },
      properties: { radius: 2000 },
    };
    const make = async (title: string, area: unknown) =>
      expectStatus<{ id: string }>(
        await call('POST', '/xapi/v1/rules', {
          title,
          twinId: truckId,
          trigger: { type: 'location', area, on: 'both' },
          commands: [{ type: 'alarm', category: 'Geofence', message: `{{trigger}} ${title}` }],
        }),
        201,
      ).id;
    const inPolygon = await make('depot area', polygon);
    const inCircle = await make('yard circle', circle);
    // Each firing is read and then closed, as an operator would: the next one is a new entry.
    const messages = async () => {
      const alarms = [...(await alarmsOfRule(inPolygon)), ...(await alarmsOfRule(inCircle))];
      if (alarms.length) await call('POST', '/xapi/v1/alarm-logs/close', { ids: alarms.map((a) => a.id) });
      return alarms.map((a) => a.message).sort();
    };

    const moves: Array<[number, number]> = [
      [10.0, 50.0], // outside both: no event (a first position outside is no leave)
      [13.4, 52.5], // enters the polygon
      [13.41, 52.51], // still inside: nothing
      [13.005, 52.005], // leaves the polygon, enters the circle (≈ 660 m from its centre)
      [13.1, 52.1], // leaves the circle (≈ 13 km)
    ];
    const expected = [
      [],
      ['enter depot area'],
      ['enter depot area'],
      ['enter depot area', 'enter yard circle', 'leave depot area'],
      ['enter depot area', 'enter yard circle', 'leave depot area', 'leave yard circle'],
    ];
    for (const [i, [lon, lat]] of moves.entries()) {
      await publish({ location: { lat, lon } });
      await settled('location', { lat, lon });
      expect(await messages(), `after move ${i}`).toEqual(expected[i]);
    }
  });
});

describe('time rules', () => {
  it('fire at their interval on the injectable clock, and a time point once', async () => {
    const interval = expectStatus<{ id: string; nextRunAt: string }>(
      await call('POST', '/xapi/v1/rules', {
        title: 'Every minute',
        twinId: truckId,
        trigger: { type: 'time', schedule: { intervalSeconds: 60 } },
        commands: [{ type: 'alarm', message: 'tick {{twin.title}}' }],
      }),
      201,
    );
    const at = new Date(clock.now().getTime() + 90_000).toISOString();
    const once = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/rules', {
        title: 'Once',
        trigger: { type: 'time', schedule: { at } },
        commands: [{ type: 'alarm', message: 'once' }],
      }),
      201,
    );
    const scheduler = t.services.ruleScheduler;
    expect(await scheduler.runDue(clock.now())).toEqual([]);
    clock.advance(61_000);
    expect(await scheduler.runDue(clock.now())).toEqual([interval.id]);
    expect(await scheduler.runDue(clock.now())).toEqual([]);
    clock.advance(30_000);
    expect(await scheduler.runDue(clock.now())).toEqual([once.id]);
    clock.advance(30_000);
    expect(await scheduler.runDue(clock.now())).toEqual([interval.id]);
    clock.advance(3600_000);
    // An hour missed: one run, not sixty.
    expect(await scheduler.runDue(clock.now())).toEqual([interval.id]);
    // Three runs while the entry stayed open: one entry, counted three times.
    expect((await alarmsOfRule(interval.id)).map((a) => [a.message, a.occurrenceCount])).toEqual([
      ['tick Truck 7', 3],
    ]);
    expect(await alarmsOfRule(once.id)).toHaveLength(1);
    const reread = expectStatus<{ nextRunAt: string | null }>(
      await call('GET', `/xapi/v1/rules/${once.id}`),
      200,
    );
    expect(reread.nextRunAt).toBeNull();
  });
});

describe('rule input', () => {
  it('refuses commands whose connector has the wrong kind or another account, and conditions that do not fit', async () => {
    const base = {
      title: 'x',
      twinId: truckId,
      trigger: { type: 'event', conditions: [{ stateKey: 'temperature', operator: '>', value: 1 }] },
    };
    const wrongKind = await call('POST', '/xapi/v1/rules', {
      ...base,
      commands: [{ type: 'webhook', connectorId: out.smtp }],
    });
    expect(wrongKind.statusCode).toBe(422);
    expect(errorCode(wrongKind)).toBe('INVALID_COMMAND');
    const other = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/accounts', { title: 'Other' }),
      201,
    ).id;
    const foreign = await insertConnector(t, other, 'webhook-out');
    expect(
      (
        await call('POST', '/xapi/v1/rules', {
          ...base,
          commands: [{ type: 'webhook', connectorId: foreign }],
        })
      ).statusCode,
    ).toBe(422);
    const badOperator = await call('POST', '/xapi/v1/rules', {
      ...base,
      trigger: { type: 'event', conditions: [{ stateKey: 'overheated', operator: '>', value: 1 }] },
      commands: [],
    });
    expect(badOperator.statusCode).toBe(400);
    expect(
      (await call('POST', '/xapi/v1/rules', { ...base, commands: [{ type: 'launch-rocket' }] })).statusCode,
    ).toBe(400);
    expect(
      (
        await call('POST', '/xapi/v1/rules', {
          ...base,
          trigger: { type: 'time', schedule: { cron: 'every day' } },
          commands: [],
        })
      ).statusCode,
    ).toBe(400);
    expect(
      (
        await call('POST', '/xapi/v1/rules', {
          ...base,
          trigger: { type: 'location', area: { type: 'Polygon', coordinates: [] }, on: 'enter' },
          commands: [],
        })
      ).statusCode,
    ).toBe(400);
    expect(
      (
        await call('POST', '/xapi/v1/rules', {
          ...base,
          commands: [{ type: 'aggregate-trigger', stateKey: 'temperature' }],
        })
      ).statusCode,
    ).toBe(422);
  });
});
