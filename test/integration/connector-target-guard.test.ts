import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTOR_KIND_DESCRIPTORS, createConnectorKinds } from '../../server/src/connectors/kinds/index.js';
import { DialOut } from '../../server/src/outgoing/dial/dial-out.js';
import { TargetGuard } from '../../server/src/outgoing/target-guard.js';
import { SecretBox } from '../../server/src/platform/crypto/secret-box.js';
import { createConnector } from './support/connectors.js';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { connectorLogs } from './support/outgoing.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';

/**
 * Every connector kind that connects to a target its tenant configures is held to the SSRF
 * protection: without STELLWERK_OUTGOING_ALLOW_PRIVATE a loopback or private target is refused and
 * nothing connects to it. A kind that sends or subscribes must have a sample configuration here,
 * or the first test fails.
 */

/** A connector configuration of each kind, aimed at `host:port`. */
const SAMPLES: Record<string, (host: string, port: number) => Record<string, unknown>> = {
  'webhook-out': (host, port) => ({ url: `http://${host}:${port}/hook`, retryDelayMs: 10 }),
  'mqtt-out': (host, port) => ({ url: `mqtt://${host}:${port}`, topic: 'plant/out', retryDelayMs: 10 }),
  'kafka-out': (host, port) => ({ brokers: [`${host}:${port}`], topic: 'plant.out', retryDelayMs: 10 }),
  'smtp-mail': (host, port) => ({
    host,
    port,
    security: 'none',
    from: 'alarms@plant.test',
    to: ['ops@plant.test'],
    retryDelayMs: 10,
  }),
  'mqtt-in': (host, port) => ({ url: `mqtt://${host}:${port}`, topics: ['plant/+/up'] }),
  'chirpstack-mqtt': (host, port) => ({ url: `mqtt://${host}:${port}`, applicationId: 'water-meters' }),
  modbus: (host, port) => ({
    host,
    port,
    registers: [{ deviceId: 'd', state: 'v', table: 'holding', address: 0 }],
  }),
  iec104: (host, port) => ({ host, port }),
  opcua: (host, port) => ({ endpointUrl: `opc.tcp://${host}:${port}` }),
  websocket: (host, port) => ({ url: `ws://${host}:${port}/feed`, deviceIdPointer: '/device' }),
  weather: (host, port) => ({
    baseUrl: `http://${host}:${port}`,
    places: [{ latitude: 52.52, longitude: 13.4 }],
  }),
};

/** Kinds that dial out on their own (a subscription), not when a message is sent. */
const SUBSCRIBING = new Set(
  CONNECTOR_KIND_DESCRIPTORS.filter((k) => k.capabilities.includes('subscribe')).map((k) => k.type),
);

it('has a sample for every kind that sends or subscribes', () => {
  const log = pino({ enabled: false });
  const kinds = createConnectorKinds({
    mqttIn: { start: async () => {}, stop: async () => {}, publish: async () => {} },
    broker: { publishDownlink: async () => {} },
    links: { register: () => {}, start: async () => {}, stop: async () => {}, session: () => undefined },
    outgoing: {
      secretBox: new SecretBox(randomBytes(32)),
      dial: new DialOut(new TargetGuard([]), log),
      log,
    },
  });
  const dialling = [...kinds.values()]
    .filter((kind) => kind.capabilities.some((c) => c === 'sends' || c === 'subscribe'))
    .map((kind) => kind.type);
  expect(dialling.sort()).toEqual(Object.keys(SAMPLES).sort());
});

describe('connector kinds without STELLWERK_OUTGOING_ALLOW_PRIVATE', () => {
  let t: TestApp;
  let token: string;
  let listener: net.Server;
  let port: number;
  let connections = 0;

  beforeAll(async () => {
    t = await createTestApp({ env: { STELLWERK_OUTGOING_ALLOW_PRIVATE: '' } });
    token = await login(t);
    listener = net.createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => listener?.close(resolve));
  });

  const refusal = (connectorId: string) =>
    waitFor(
      async () =>
        (await connectorLogs(t, token, connectorId)).find(
          (entry) => entry.level === 'error' && entry.details.code === 'OUTGOING_TARGET_REFUSED',
        ),
      10_000,
      { what: `the refusal in the log of ${connectorId}` },
    );

  it.each(Object.entries(SAMPLES))('%s: refuses loopback and private targets', async (type, sample) => {
    // kafkajs splits a broker at its first colon: an IPv6 literal is no broker it can name.
    const hosts = ['127.0.0.1', 'localhost', '10.1.2.3', ...(type === 'kafka-out' ? [] : ['[fd00::1]'])];
    for (const host of hosts) {
      const connector = await createConnector(t, bearer(token), { type, config: sample(host, port) });
      if (!SUBSCRIBING.has(type)) {
        await t.services.outgoingDispatcher.send(
          t.rootAccountId,
          connector.id,
          { body: { probe: host } },
          { kind: 'rule', id: 'guard-test' },
        );
      }
      const entry = await refusal(connector.id);
      expect(entry.message, `${type} ${host}`).toContain('STELLWERK_OUTGOING_ALLOW_PRIVATE');
      expectStatus(await caller(t, bearer(token))('DELETE', `/xapi/v1/connectors/${connector.id}`), 204);
    }
    expect(connections).toBe(0);
  });

  it('smtp-mail: refuses a loopback OAuth token endpoint when the consent is redeemed', async () => {
    const call = caller(t, bearer(token));
    const connector = await createConnector(t, bearer(token), {
      type: 'smtp-mail',
      config: {
        ...SAMPLES['smtp-mail']!('smtp.example.com', 587),
        auth: 'oauth2',
        username: 'mailbox@plant.test',
        oauth2Provider: 'custom',
        oauth2ClientId: 'cid',
        oauth2ClientSecret: 'csecret',
        oauth2AuthUrl: 'https://login.mail.example/authorize',
        oauth2TokenUrl: `http://127.0.0.1:${port}/token`,
      },
    });
    const { authorizationUrl } = expectStatus<{ authorizationUrl: string }>(
      await call('POST', '/xapi/v1/oauth2/mail/authorize', { connectorId: connector.id }),
      200,
    );
    const state = new URL(authorizationUrl).searchParams.get('state')!;
    const callback = await t.app.inject({
      url: `/api/v1/oauth2/custom/callback?code=the-code&state=${encodeURIComponent(state)}`,
    });
    expect(callback.statusCode, callback.body).toBe(422);
    expect(callback.json()).toMatchObject({ error: { code: 'OUTGOING_TARGET_REFUSED' } });
    expect(connections).toBe(0);
  });
});
