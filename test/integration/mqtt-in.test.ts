import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, expectStatus, login, type Credentials } from './support/identity.js';
import { createConnector, packetsOf, type ConnectorBody } from './support/connectors.js';
import {
  makePki,
  mosquittoPasswd,
  mosquittoPub,
  startMosquitto,
  type Mosquitto,
  type TestPki,
} from './support/mosquitto.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';

/** Acceptance 3: mqtt-in subscribes to a real Mosquitto, once with a password, once with TLS client certificates. */

let t: TestApp;
let admin: Credentials;
let call: ReturnType<typeof caller>;
const brokers: Mosquitto[] = [];

beforeAll(async () => {
  t = await createTestApp();
  admin = bearer(await login(t));
  call = caller(t, admin);
});
afterAll(async () => {
  await t?.close();
  for (const broker of brokers) await broker.stop();
});

const ready = (id: string) =>
  waitFor(async () => (t.services.mqttIn.isReady(id) ? true : undefined), 10_000, {
    what: 'mqtt-in subscription',
  });

const logMessages = async (id: string) =>
  expectStatus<{ data: Array<{ level: string; message: string }> }>(
    await call('GET', `/xapi/v1/connectors/${id}/logs`),
    200,
  ).data.map((l) => `${l.level}: ${l.message}`);

const packetFor = (connectorId: string, deviceKey: string) =>
  waitFor(async () => (await packetsOf(t, connectorId)).find((p) => p.device_key === deviceKey), 10_000, {
    what: `packet of ${deviceKey}`,
  });

describe('mqtt-in with username and password', () => {
  let broker: Mosquitto;
  let connector: ConnectorBody;

  beforeAll(async () => {
    broker = await startMosquitto(async (dir) => [
      'allow_anonymous false',
      `password_file ${await mosquittoPasswd(dir, 'stellwerk', 'bridge secret 1')}`,
    ]);
    brokers.push(broker);
    await mosquittoPasswd(broker.dir, 'stellwerk', 'bridge secret 1');
  });

  it('subscribes, stores published messages as packets and acknowledges QoS 1 after storing', async () => {
    connector = await createConnector(t, admin, {
      type: 'mqtt-in',
      config: {
        url: `mqtt://127.0.0.1:${broker.port}`,
        topics: ['plant/+/up'],
        deviceIdTopicSegment: 1,
        qos: 1,
        username: 'stellwerk',
        password: 'bridge secret 1',
        clientId: 'stellwerk-test-bridge',
      },
    });
    await ready(connector.id);
    const auth = ['-p', String(broker.port), '-u', 'stellwerk', '-P', 'bridge secret 1'];
    await mosquittoPub([...auth, '-q', '1', '-t', 'plant/meter-1/up', '-m', '{"flow":4.2}']);
    await mosquittoPub([...auth, '-q', '0', '-t', 'plant/meter-2/up', '-m', '{"flow":1}']);
    await mosquittoPub([...auth, '-q', '1', '-t', 'elsewhere/meter-3/up', '-m', '{}']);
    const first = await packetFor(connector.id, 'meter-1');
    expect(JSON.parse(first.payload.toString())).toEqual({ flow: 4.2 });
    expect(first.source).toBe('mqtt-in');
    expect(first.meta).toEqual({ topic: 'plant/meter-1/up' });
    await packetFor(connector.id, 'meter-2');
    expect((await packetsOf(t, connector.id)).map((p) => p.device_key)).not.toContain('meter-3');
    expect(await logMessages(connector.id)).toContain(`info: Connected to mqtt://127.0.0.1:${broker.port}`);
    const read = expectStatus<ConnectorBody>(await call('GET', `/xapi/v1/connectors/${connector.id}`), 200);
    expect(read.packetsIn).toBe(2);
    expect(read.config.password).toBe('********');
  });

  it('stops the client when deactivated and starts it again when activated', async () => {
    expectStatus(await call('POST', `/xapi/v1/connectors/${connector.id}/deactivate`), 200);
    expect(t.services.mqttIn.isReady(connector.id)).toBe(false);
    const auth = ['-p', String(broker.port), '-u', 'stellwerk', '-P', 'bridge secret 1'];
    // No persistent session was left subscribed: the bridge's QoS 1 session keeps this one for later.
    await mosquittoPub([...auth, '-q', '1', '-t', 'plant/while-off/up', '-m', '{}']);
    await new Promise((r) => setTimeout(r, 300));
    expect((await packetsOf(t, connector.id)).map((p) => p.device_key)).not.toContain('while-off');
    expectStatus(await call('POST', `/xapi/v1/connectors/${connector.id}/activate`), 200);
    await ready(connector.id);
    // The broker kept the bridge's session (clean: false) and delivers what was queued meanwhile.
    await packetFor(connector.id, 'while-off');
  });

  it('logs a refused login and never becomes ready', async () => {
    const wrong = await createConnector(t, admin, {
      type: 'mqtt-in',
      config: {
        url: `mqtt://127.0.0.1:${broker.port}`,
        topics: ['#'],
        username: 'stellwerk',
        password: 'wrong',
      },
    });
    const logs = await waitFor(async () => {
      const messages = await logMessages(wrong.id);
      return messages.some((m) => m.startsWith('error: Connection error')) ? messages : undefined;
    });
    expect(logs.join('\n')).toMatch(/Not authorized|Bad username or password/i);
    expect(t.services.mqttIn.isReady(wrong.id)).toBe(false);
    expectStatus(await call('DELETE', `/xapi/v1/connectors/${wrong.id}`), 204);
  });

  it('can take the device id from a payload field', async () => {
    const byField = await createConnector(t, admin, {
      type: 'mqtt-in',
      config: {
        url: `mqtt://127.0.0.1:${broker.port}`,
        topics: ['gateway/all'],
        username: 'stellwerk',
        password: 'bridge secret 1',
        deviceIdSource: 'payload',
        deviceIdField: 'dev',
      },
    });
    await ready(byField.id);
    const auth = ['-p', String(broker.port), '-u', 'stellwerk', '-P', 'bridge secret 1'];
    await mosquittoPub([...auth, '-q', '1', '-t', 'gateway/all', '-m', '{"dev":"sensor-9","t":21}']);
    await mosquittoPub([...auth, '-q', '1', '-t', 'gateway/all', '-m', '{"t":22}']);
    await packetFor(byField.id, 'sensor-9');
    // Refused at the door: counted as failed, never stored. (Stored packets of unregistered devices
    // are counted as failed by the ingest pipeline as well, hence at least 1.)
    const failed = await waitFor(async () => {
      const read = expectStatus<ConnectorBody>(await call('GET', `/xapi/v1/connectors/${byField.id}`), 200);
      return read.packetsFailed >= 1 ? read : undefined;
    });
    expect(failed.packetsIn).toBe(1);
    expect((await packetsOf(t, byField.id)).map((p) => p.device_key)).toEqual(['sensor-9']);
    expect(await logMessages(byField.id)).toContain('warn: Packet refused: no device id in topic or payload');
    expectStatus(await call('POST', `/xapi/v1/connectors/${byField.id}/deactivate`), 200);
  });

  it('consumes a shared subscription through every slot on a single node, each message once', async () => {
    const shared = await createConnector(t, admin, {
      type: 'mqtt-in',
      config: {
        url: `mqtt://127.0.0.1:${broker.port}`,
        topics: ['shared/+/up'],
        deviceIdTopicSegment: 1,
        username: 'stellwerk',
        password: 'bridge secret 1',
        sharedGroup: 'stellwerk',
        sharedSlots: 3,
      },
    });
    // Every slot's session is there: the broker hands messages to all three in turn.
    await waitFor(async () =>
      (await logMessages(shared.id)).filter((m) => m.startsWith('info: Connected')).length === 3
        ? true
        : undefined,
    );
    await ready(shared.id);
    const auth = ['-p', String(broker.port), '-u', 'stellwerk', '-P', 'bridge secret 1'];
    for (let i = 0; i < 6; i++)
      await mosquittoPub([...auth, '-q', '1', '-t', `shared/s-${i}/up`, '-m', `{"i":${i}}`]);
    const keys = await waitFor(async () => {
      const stored = (await packetsOf(t, shared.id)).map((p) => p.device_key);
      return stored.length >= 6 ? stored : undefined;
    });
    expect(keys.sort()).toEqual(['s-0', 's-1', 's-2', 's-3', 's-4', 's-5']);
    expectStatus(await call('POST', `/xapi/v1/connectors/${shared.id}/deactivate`), 200);
  });
});

describe('mqtt-in with TLS client certificates', () => {
  let broker: Mosquitto;
  let pki: TestPki;
  let pem: { ca: string; cert: string; key: string };

  beforeAll(async () => {
    broker = await startMosquitto(async (dir) => {
      pki = await makePki(dir);
      return [
        `cafile ${pki.ca}`,
        `certfile ${pki.serverCert}`,
        `keyfile ${pki.serverKey}`,
        'require_certificate true',
        'use_identity_as_username true',
      ];
    });
    brokers.push(broker);
    pem = {
      ca: await readFile(pki.ca, 'utf8'),
      cert: await readFile(pki.clientCert, 'utf8'),
      key: await readFile(pki.clientKey, 'utf8'),
    };
  });

  const tlsPub = (topic: string, message: string) =>
    mosquittoPub([
      '-p',
      String(broker.port),
      '--cafile',
      pki.ca,
      '--cert',
      pki.clientCert,
      '--key',
      pki.clientKey,
      '-q',
      '1',
      '-t',
      topic,
      '-m',
      message,
    ]);

  it('connects with server CA, client certificate and key, and stores packets', async () => {
    const connector = await createConnector(t, admin, {
      type: 'mqtt-in',
      config: {
        url: `mqtts://127.0.0.1:${broker.port}`,
        topics: ['site/+/telemetry'],
        deviceIdTopicSegment: 1,
        serverCa: pem.ca,
        clientCert: pem.cert,
        clientKey: pem.key,
      },
    });
    expect(connector.config.clientKey).toBe('********');
    await ready(connector.id);
    await tlsPub('site/boiler-1/telemetry', '{"temp":61}');
    const packet = await packetFor(connector.id, 'boiler-1');
    expect(JSON.parse(packet.payload.toString())).toEqual({ temp: 61 });
    expectStatus(await call('POST', `/xapi/v1/connectors/${connector.id}/deactivate`), 200);
  });

  it('refuses an unknown server CA unless self-signed certificates are accepted', async () => {
    const base = {
      url: `mqtts://127.0.0.1:${broker.port}`,
      topics: ['site/+/telemetry'],
      deviceIdTopicSegment: 1,
      clientCert: pem.cert,
      clientKey: pem.key,
    };
    const strict = await createConnector(t, admin, { type: 'mqtt-in', config: base });
    // A failed handshake reads like any connection that did not come about (the cause is in the server log).
    await waitFor(async () =>
      (await logMessages(strict.id)).some((m) => m.startsWith('error: Could not connect to the broker'))
        ? true
        : undefined,
    );
    expect(t.services.mqttIn.isReady(strict.id)).toBe(false);
    expectStatus(await call('POST', `/xapi/v1/connectors/${strict.id}/deactivate`), 200);

    const lenient = await createConnector(t, admin, {
      type: 'mqtt-in',
      config: { ...base, rejectUnauthorized: false },
    });
    await ready(lenient.id);
    await tlsPub('site/boiler-2/telemetry', '{"temp":58}');
    await packetFor(lenient.id, 'boiler-2');
    expectStatus(await call('POST', `/xapi/v1/connectors/${lenient.id}/deactivate`), 200);
  });
});
