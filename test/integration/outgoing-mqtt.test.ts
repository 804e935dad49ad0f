import { readFile } from 'node:fs/promises';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectClient,
  createBrokerConnector,
  startBrokerApp,
  upTopic,
  type BrokerTestApp,
} from './support/broker.js';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { insertDevice, insertDriver, processedPackets } from './support/ingest-fixtures.js';
import {
  makePki,
  mosquittoPasswd,
  startMosquitto,
  type Mosquitto,
  type TestPki,
} from './support/mosquitto.js';
import { connectorLogs, metricValue } from './support/outgoing.js';
import { waitFor } from './support/wait.js';

/**
 * MQTT outgoing against a real Mosquitto started here: password login, QoS 2 and topic
 * templates, TLS with a client certificate, then Mosquitto stopped: ingestion through the
 * embedded broker goes on while the bounded queue's overflow policy shows in logs and /metrics.
 */

let t: BrokerTestApp;
let token: string;
let plain: Mosquitto;
let tls: Mosquitto;
let pki: TestPki;
const call = (...args: Parameters<ReturnType<typeof caller>>) => caller(t, bearer(token))(...args);

beforeAll(async () => {
  t = await startBrokerApp();
  token = await login(t);
  plain = await startMosquitto(async (dir) => [
    'allow_anonymous false',
    `password_file ${await mosquittoPasswd(dir, 'out', 'out secret 1')}`,
  ]);
  tls = await startMosquitto(async (dir) => {
    pki = await makePki(dir);
    return [
      `cafile ${pki.ca}`,
      `certfile ${pki.serverCert}`,
      `keyfile ${pki.serverKey}`,
      'require_certificate true',
      'allow_anonymous true',
    ];
  });
}, 60_000);
afterAll(async () => {
  await t?.services.outgoingDispatcher.stop();
  await plain?.stop();
  await tls?.stop();
  await t?.closeAll();
});

async function mqttOut(config: Record<string, unknown>) {
  return expectStatus<{ id: string; config: Record<string, unknown> }>(
    await call('POST', '/xapi/v1/connectors', { type: 'mqtt-out', title: 'to plant broker', config }),
    201,
  );
}

function subscribe(options: mqtt.IClientOptions & { url: string }, topic: string) {
  const messages: Array<{ topic: string; payload: string; qos: number }> = [];
  return new Promise<{ client: MqttClient; messages: typeof messages }>((resolve, reject) => {
    const client = mqtt.connect(options.url, { ...options, reconnectPeriod: 0 });
    client.on('message', (topic, payload, packet) =>
      messages.push({ topic, payload: payload.toString(), qos: packet.qos }),
    );
    client.once('error', reject);
    client.once('connect', () =>
      client.subscribe(topic, { qos: 2 }, (error) => (error ? reject(error) : resolve({ client, messages }))),
    );
  });
}

const send = (connectorId: string, body: unknown, topic?: string) =>
  t.services.outgoingDispatcher.send(
    t.rootAccountId,
    connectorId,
    { body, ...(topic ? { topic } : {}) },
    { kind: 'flow', id: 'mqtt-test' },
  );

describe('mqtt-out', () => {
  it('publishes with QoS 2 on a templated topic after a password login', async () => {
    const connector = await mqttOut({
      url: `mqtt://127.0.0.1:${plain.port}`,
      topic: 'plant/{{device}}/alerts',
      qos: 2,
      username: 'out',
      password: 'out secret 1',
    });
    expect(connector.config.password).toBe('********');
    const { client, messages } = await subscribe(
      { url: `mqtt://127.0.0.1:${plain.port}`, username: 'out', password: 'out secret 1' },
      'plant/#',
    );
    expect(await send(connector.id, { device: 'boiler/1', level: 'high' })).toEqual({ queued: true });
    await send(connector.id, 'raw text', 'plant/direct');
    await waitFor(async () => (messages.length >= 2 ? true : undefined));
    expect(messages).toEqual([
      {
        topic: 'plant/boiler_1/alerts',
        payload: JSON.stringify({ device: 'boiler/1', level: 'high' }),
        qos: 2,
      },
      { topic: 'plant/direct', payload: 'raw text', qos: 2 },
    ]);
    await client.endAsync();
  });

  it('connects with a client certificate and the broker CA', async () => {
    const connector = await mqttOut({
      url: `mqtts://127.0.0.1:${tls.port}`,
      topic: 'secure/out',
      qos: 1,
      serverCa: await readFile(pki.ca, 'utf8'),
      clientCert: await readFile(pki.clientCert, 'utf8'),
      clientKey: await readFile(pki.clientKey, 'utf8'),
    });
    expect(connector.config.clientKey).toBe('********');
    const { client, messages } = await subscribe(
      {
        url: `mqtts://127.0.0.1:${tls.port}`,
        ca: await readFile(pki.ca),
        cert: await readFile(pki.clientCert),
        key: await readFile(pki.clientKey),
      },
      'secure/#',
    );
    await send(connector.id, { ok: true });
    await waitFor(async () => (messages.length >= 1 ? true : undefined));
    expect(messages[0]).toMatchObject({ topic: 'secure/out', payload: '{"ok":true}', qos: 1 });
    await client.endAsync();
  });

  it('refuses wildcard topics and a key without a certificate', async () => {
    for (const config of [
      { url: 'mqtt://broker.example:1883', topic: 'a/+/b' },
      { url: 'mqtt://broker.example:1883', topic: 'a/#' },
      { url: 'mqtt://broker.example:1883', topic: 'a', qos: 3 },
      { url: 'http://broker.example', topic: 'a' },
      {
        url: 'mqtt://broker.example:1883',
        topic: 'a',
        clientKey: '-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----',
      },
    ]) {
      expect(
        (await call('POST', '/xapi/v1/connectors', { type: 'mqtt-out', title: 'bad', config })).statusCode,
        JSON.stringify(config),
      ).toBe(400);
    }
  });

  it('keeps ingesting through the embedded broker while Mosquitto is down; the overflow policy shows in logs and /metrics', async () => {
    const common = {
      url: `mqtt://127.0.0.1:${plain.port}`,
      topic: 'plant/x',
      username: 'out',
      password: 'out secret 1',
      retryDelayMs: 100,
      maxAttempts: 20,
      queueSize: 3,
    };
    const oldest = await mqttOut({ ...common, overflow: 'drop-oldest' });
    const newest = await mqttOut({ ...common, overflow: 'drop-newest' });
    await plain.stop();

    const results = { oldest: [] as unknown[], newest: [] as unknown[] };
    for (let i = 0; i < 8; i++) {
      results.oldest.push(await send(oldest.id, { i }));
      results.newest.push(await send(newest.id, { i }));
    }
    // One message is in delivery (retrying), three wait, four are dropped.
    expect(results.oldest.every((r) => (r as { queued: boolean }).queued)).toBe(true);
    expect(results.newest.filter((r) => (r as { queued: boolean }).queued)).toHaveLength(4);
    expect(results.newest.slice(4)).toEqual(Array(4).fill({ queued: false, reason: 'queue-full' }));

    // Ingestion is not held up by the dead target.
    const gateway = await createBrokerConnector(t);
    const driverId = await insertDriver(t, { type: 'json' });
    await insertDevice(t, { connectorId: gateway.connectorId, deviceKey: 'meter-9', driverId });
    const client = await connectClient(`mqtt://127.0.0.1:${t.mqttPort}`, gateway);
    const began = Date.now();
    for (let i = 0; i < 20; i++)
      await client.publishAsync(upTopic(gateway, 'meter-9'), JSON.stringify({ i }), { qos: 1 });
    await client.endAsync();
    const rows = await processedPackets(t, gateway.connectorId, 20);
    expect(rows.every((r) => r.status === 'parsed')).toBe(true);
    expect(Date.now() - began).toBeLessThan(10_000);

    for (const [connector, policy] of [
      [oldest, 'drop-oldest'],
      [newest, 'drop-newest'],
    ] as const) {
      expect(
        await metricValue(t, 'stellwerk_outgoing_messages_total', {
          connector: connector.id,
          result: 'dropped',
        }),
      ).toBe(4);
      expect(await metricValue(t, 'stellwerk_outgoing_queue_depth', { connector: connector.id })).toBe(3);
      // Each attempt waits up to 2 s for the connection before it counts as failed and is retried.
      await waitFor(async () =>
        (await metricValue(t, 'stellwerk_outgoing_retries_total', { connector: connector.id })) > 0
          ? true
          : undefined,
      );
      const logs = await waitFor(async () => {
        const entries = await connectorLogs(t, token, connector.id);
        return entries.some((e) => e.level === 'warn') ? entries : undefined;
      });
      const drop = logs.find((e) => e.level === 'warn')!;
      expect(drop.message).toContain('Dropped');
      expect(drop.details).toMatchObject({ overflow: policy, queueSize: 3 });
    }
  });
});
