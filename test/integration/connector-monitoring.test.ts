import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlarmEntry } from '../../server/src/integration/ports.js';
import { TestClock } from './support/auth.js';
import {
  connectClient,
  createBrokerConnector,
  startBrokerApp,
  type BrokerCredentials,
  type BrokerTestApp,
} from './support/broker.js';
import { bearer, caller, errorCode, expectStatus, login } from './support/identity.js';
import { insertConnector } from './support/ingest-fixtures.js';
import { RecordingDispatch } from './support/recording-dispatch.js';

/**
 * Acceptance 3: each of the six connector-monitoring rule types, triggered by a scripted scenario
 * (real webhook packets, real activation changes, real MQTT clients on the embedded broker),
 * writes its alarm entry. The evaluator runs on the injectable clock (`evaluate(now)`).
 */

const clock = new TestClock();
let t: BrokerTestApp;
let call: ReturnType<typeof caller>;
const recorder = new RecordingDispatch();
const created: AlarmEntry[] = [];
let smtp: string;

interface Webhook {
  id: string;
  url: string;
}
interface Alarm {
  category: string;
  message: string;
  reference: { type: string; id: string };
  source: { kind: string; id: string };
  details: Record<string, unknown>;
}

async function webhookConnector(title: string): Promise<Webhook> {
  const body = expectStatus<{ id: string; credentials: { apiEndpoint: string } }>(
    await call('POST', '/xapi/v1/connectors', { type: 'webhook-in', title }),
    201,
  );
  return { id: body.id, url: new URL(body.credentials.apiEndpoint).pathname };
}

const post = (w: Webhook, payload: unknown) =>
  t.app.inject({ method: 'POST', url: w.url, payload: payload as object });

async function rule(connectorId: string, body: Record<string, unknown>): Promise<string> {
  return expectStatus<{ id: string }>(
    await call('POST', `/xapi/v1/connectors/${connectorId}/monitoring-rules`, {
      title: String(body.type),
      ...body,
    }),
    201,
  ).id;
}

/** One evaluation round at the test clock; returns the ids of the rules that fired. */
async function round(advanceMs = 0): Promise<string[]> {
  clock.advance(advanceMs);
  return (await t.services.monitoringEvaluator.evaluate(clock.now())).map((f) => f.ruleId);
}

async function alarmsOf(ruleId: string): Promise<Alarm[]> {
  const list = expectStatus<{ data: Alarm[] }>(
    await call('GET', '/xapi/v1/alarm-logs?category=Konnektor%C3%BCberwachung&pageSize=500'),
    200,
  );
  return list.data.filter((a) => a.source.id === ruleId);
}

beforeAll(async () => {
  t = await startBrokerApp({ clock: clock.now });
  t.services.outgoing.use(recorder);
  t.services.alarmLogs.onCreated((entry) => void created.push(entry));
  call = caller(t, bearer(await login(t)));
  smtp = await insertConnector(t, t.rootAccountId, 'smtp-mail');
}, 60_000);

afterAll(() => t?.closeAll());

describe('connector monitoring', () => {
  it('packet threshold: fires once when the packets in the window reach it, re-arms when they fall below', async () => {
    const w = await webhookConnector('busy');
    const id = await rule(w.id, {
      type: 'packet-threshold',
      params: { windowSeconds: 60, threshold: 3 },
      mailConnectorId: smtp,
      mailTo: ['noc@example.test'],
    });
    expect(await round()).not.toContain(id);
    for (let i = 0; i < 3; i++) expectStatus(await post(w, { device_id: `d${i}`, v: i }), 202);
    expect(await round(1000)).toContain(id);
    expect(await round(1000)).not.toContain(id); // still holding: no second alarm
    expect(await round(61_000)).not.toContain(id); // window passed: re-armed
    await post(w, [{ device_id: 'a' }, { device_id: 'b' }, { device_id: 'c' }]);
    expect(await round(1000)).toContain(id);
    const alarms = await alarmsOf(id);
    expect(alarms).toHaveLength(2);
    expect(alarms[0]).toMatchObject({
      category: 'Konnektorüberwachung',
      reference: { type: 'connector', id: w.id },
      details: { ruleType: 'packet-threshold', count: 3 },
    });
    const mails = recorder.from('connector-monitoring', id);
    expect(mails).toHaveLength(2);
    expect(mails[0]).toMatchObject({
      connectorId: smtp,
      message: { to: ['noc@example.test'], subject: '[Konnektorüberwachung] packet-threshold' },
    });
    // The entry reached AlarmEntryEvents listeners after its commit (integration flows subscribe here).
    expect(created.filter((e) => e.source?.id === id)).toHaveLength(2);
  });

  it('failed-packet threshold: refused webhook packets', async () => {
    const w = await webhookConnector('broken sender');
    const id = await rule(w.id, {
      type: 'failed-packet-threshold',
      params: { windowSeconds: 300, threshold: 2 },
    });
    await round();
    expect((await post(w, { no_device: true })).statusCode).toBeGreaterThanOrEqual(400);
    expect(await round(1000)).not.toContain(id);
    expect((await post(w, [{ also_no_device: 1 }])).statusCode).toBeGreaterThanOrEqual(400);
    expect(await round(1000)).toContain(id);
    expect((await alarmsOf(id))[0]!.details).toMatchObject({ count: 2 });
  });

  it('status duration: inactive for longer than the limit', async () => {
    const w = await webhookConnector('switched off');
    const id = await rule(w.id, {
      type: 'status-duration',
      params: { status: 'inactive', durationSeconds: 120 },
    });
    expectStatus(await call('POST', `/xapi/v1/connectors/${w.id}/deactivate`), 200);
    expect(await round()).not.toContain(id);
    expect(await round(100_000)).not.toContain(id);
    expect(await round(21_000)).toContain(id);
    expect((await alarmsOf(id))[0]!.message).toMatch(/inactive for 121 s/);
  });

  it('status count: a gateway on the embedded broker disconnects twice in the window', async () => {
    const gateway: BrokerCredentials = await createBrokerConnector(t, { title: 'gateway' });
    const id = await rule(gateway.connectorId, {
      type: 'status-count',
      params: { status: 'disconnected', windowSeconds: 600, threshold: 2 },
    });
    const url = `mqtt://127.0.0.1:${t.mqttPort}`;
    let client: MqttClient = await connectClient(url, gateway);
    expect(await round()).not.toContain(id); // baseline: connected
    for (let i = 0; i < 2; i++) {
      await client.endAsync();
      await waitDisconnected(gateway.connectorId);
      const fired = await round(1000);
      expect(fired.includes(id)).toBe(i === 1);
      client = await connectClient(url, gateway);
      await round(1000);
    }
    await client.endAsync();
    expect((await alarmsOf(id))[0]!.details).toMatchObject({ status: 'disconnected', count: 2 });
  });

  it('status change (flapping): activated and deactivated three times', async () => {
    const w = await webhookConnector('flapping');
    const id = await rule(w.id, { type: 'status-change', params: { windowSeconds: 300, threshold: 3 } });
    await round();
    const fired: boolean[] = [];
    for (const action of ['deactivate', 'activate', 'deactivate']) {
      expectStatus(await call('POST', `/xapi/v1/connectors/${w.id}/${action}`), 200);
      fired.push((await round(5000)).includes(id));
    }
    expect(fired).toEqual([false, false, true]);
    expect((await alarmsOf(id))[0]!.details).toMatchObject({
      changes: 3,
      statuses: ['inactive', 'active', 'inactive'],
    });
  });

  it('no data: silent for the window, quiet again once a packet came', async () => {
    const w = await webhookConnector('silent');
    const id = await rule(w.id, { type: 'no-data', params: { windowSeconds: 3600 } });
    expect(await round()).not.toContain(id);
    expect(await round(3_601_000)).toContain(id);
    expect(await round(60_000)).not.toContain(id);
    clock.advance(-3_661_000); // packets carry real time: bring the clock back next to it
    await post(w, { device_id: 'x' });
    await round(1000);
    const listed = expectStatus<{ firing: boolean }>(
      await call('GET', `/xapi/v1/connector-monitoring-rules/${id}`),
      200,
    );
    expect(listed.firing).toBe(false);
    expect(await alarmsOf(id)).toHaveLength(1);
  });

  it('takes e-mail only through an smtp-mail connector of the same account; such a connector cannot be deleted', async () => {
    const w = await webhookConnector('checked');
    const wrongKind = await call('POST', `/xapi/v1/connectors/${w.id}/monitoring-rules`, {
      title: 'x',
      type: 'no-data',
      params: { windowSeconds: 60 },
      mailConnectorId: w.id,
    });
    expect(wrongKind.statusCode).toBe(422);
    expect(errorCode(wrongKind)).toBe('INVALID_MAIL_CONNECTOR');
    const other = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/accounts', { title: 'Elsewhere' }),
      201,
    ).id;
    const foreignSmtp = await insertConnector(t, other, 'smtp-mail');
    expect(
      (
        await call('POST', `/xapi/v1/connectors/${w.id}/monitoring-rules`, {
          title: 'x',
          type: 'no-data',
          params: { windowSeconds: 60 },
          mailConnectorId: foreignSmtp,
        })
      ).statusCode,
    ).toBe(422);
    expect(
      (
        await call('POST', `/xapi/v1/connectors/${w.id}/monitoring-rules`, {
          title: 'x',
          type: 'status-count',
          params: { windowSeconds: 60 },
        })
      ).statusCode,
    ).toBe(400);
    const blocked = await call('DELETE', `/xapi/v1/connectors/${smtp}`);
    expect(blocked.statusCode).toBe(409);
    expect(errorCode(blocked)).toBe('DELETE_BLOCKED');
    expect(JSON.stringify(blocked.json())).toContain('connectorMonitoringRule');
  });
});

async function waitDisconnected(connectorId: string): Promise<void> {
  for (let i = 0; i < 100 && t.services.broker.clientCount(connectorId) > 0; i++)
    await new Promise((r) => setTimeout(r, 20));
  expect(t.services.broker.clientCount(connectorId)).toBe(0);
}
