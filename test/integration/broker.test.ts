import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import mqttPacket from 'mqtt-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrokerService } from '../../server/src/broker/broker.service.js';
import { StartupError } from '../../server/src/platform/db/startup-error.js';
import { Metrics } from '../../server/src/platform/metrics.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from './support/test-app.js';
import { bearer } from './support/auth.js';
import { insertDevice, insertDriver } from './support/ingest-fixtures.js';
import {
  connectClient,
  createBrokerConnector,
  runMosquitto,
  startBrokerApp,
  storedPackets,
  upTopic,
  type BrokerCredentials,
  type BrokerTestApp,
} from './support/broker.js';
import { waitFor } from './support/wait.js';

let t: BrokerTestApp;
let dir: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-broker-'));
  // A self-signed certificate for the TLS listener, made here by openssl.
  const made = await runMosquitto('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=localhost',
    '-addext',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-keyout',
    path.join(dir, 'key.pem'),
    '-out',
    path.join(dir, 'cert.pem'),
  ]);
  expect(made.code, made.stderr).toBe(0);
  t = await startBrokerApp({
    env: {
      STELLWERK_MQTT_CONNECT_TIMEOUT_MS: '800',
      STELLWERK_MQTT_MAX_PACKET_BYTES: '65536',
      STELLWERK_MQTT_TLS_PORT: '0',
      STELLWERK_MQTT_TLS_CERT: path.join(dir, 'cert.pem'),
      STELLWERK_MQTT_TLS_KEY: path.join(dir, 'key.pem'),
    },
  });
});
afterAll(async () => {
  await t?.closeAll();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const pub = (c: BrokerCredentials, args: string[]) =>
  runMosquitto('mosquitto_pub', [
    '-h',
    '127.0.0.1',
    '-p',
    String(t.mqttPort),
    '-u',
    c.username,
    '-P',
    c.password,
    ...args,
  ]);

const connectorLogs = (connectorId: string) =>
  t.orm.em
    .fork()
    .getConnection()
    .execute<Array<{ message: string; details: Record<string, unknown> }>>(
      'SELECT message, details FROM connector_logs WHERE connector_id = ? ORDER BY created_at',
      [connectorId],
    );

describe('mosquitto_pub into the embedded broker', () => {
  it.each([
    ['mqttv311', '1'],
    ['mqttv311', '0'],
    ['mqttv5', '1'],
    ['mqttv5', '0'],
  ])('stores a JSON packet published with %s at QoS %s', async (version, qos) => {
    const c = await createBrokerConnector(t);
    const body = JSON.stringify({ temperature: 21.5, version, qos });
    const run = await pub(c, ['-V', version, '-q', qos, '-t', upTopic(c, 'meter-1'), '-m', body]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // QoS 1 is acknowledged after the commit: the row is there when mosquitto_pub returns.
    const rows =
      qos === '1'
        ? await storedPackets(t, c.connectorId)
        : await waitFor(async () => {
            const r = await storedPackets(t, c.connectorId);
            return r.length ? r : undefined;
          });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ device_key: 'meter-1', source: 'mqtt' });
    expect(rows[0]!.payload.toString()).toBe(body);
  });

  it.each(['mqttv311', 'mqttv5'])(
    'stores a binary payload from a file byte for byte (%s)',
    async (version) => {
      const c = await createBrokerConnector(t);
      const bytes = Buffer.from([0x00, 0xff, 0x80, 0x7f, 0x01, 0xfe, 0x10, 0x00, 0x5b]);
      const file = path.join(dir, `payload-${version}.bin`);
      await fs.writeFile(file, bytes);
      const run = await pub(c, ['-V', version, '-q', '1', '-t', upTopic(c, 'sensor-9'), '-f', file]);
      expect(run.code).toBe(0);
      const rows = await storedPackets(t, c.connectorId);
      expect(rows.map((r) => Buffer.compare(r.payload, bytes))).toEqual([0]);
    },
  );

  it.each(['mqttv311', 'mqttv5'])('refuses wrong credentials (%s)', async (version) => {
    const c = await createBrokerConnector(t);
    const run = await pub({ ...c, password: 'wrong' }, [
      '-V',
      version,
      '-q',
      '1',
      '-t',
      upTopic(c, 'd'),
      '-m',
      '{}',
    ]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/not authori[sz]ed|bad user ?name or password/i);
    expect(await storedPackets(t, c.connectorId)).toHaveLength(0);
  });

  it.each(['mqttv311', 'mqttv5'])('refuses an inactive connector (%s)', async (version) => {
    const c = await createBrokerConnector(t, { active: false });
    const run = await pub(c, ['-V', version, '-q', '1', '-t', upTopic(c, 'd'), '-m', '{}']);
    expect(run.code).not.toBe(0);
    expect(await storedPackets(t, c.connectorId)).toHaveLength(0);
  });

  it.each(['mqttv311', 'mqttv5'])(
    'refuses a JSON array of more than 50 items and says why (%s)',
    async (version) => {
      const c = await createBrokerConnector(t);
      const ok = JSON.stringify(Array.from({ length: 50 }, (_, i) => ({ i })));
      const tooMany = JSON.stringify(Array.from({ length: 51 }, (_, i) => ({ i })));
      expect((await pub(c, ['-V', version, '-q', '1', '-t', upTopic(c, 'd'), '-m', ok])).code).toBe(0);
      const run = await pub(c, ['-V', version, '-q', '1', '-t', upTopic(c, 'd'), '-m', tooMany]);
      // 3.1.1: connection closed without PUBACK; 5: PUBACK with reason 0x99 (payload format invalid).
      if (version === 'mqttv5') expect(run.stderr).toMatch(/Publish 1 failed: Payload format invalid/);
      else
        expect({ code: run.code, stderr: run.stderr.trim() }).toEqual({
          code: 7,
          stderr: 'Error: The connection was lost.',
        });
      const rows = await storedPackets(t, c.connectorId);
      expect(rows.map((r) => r.payload.toString())).toEqual([ok]);
      const refusal = await waitFor(async () =>
        (await connectorLogs(c.connectorId)).find((l) => l.details.code === 'TOO_MANY_ITEMS'),
      );
      expect(refusal.message).toMatch(/51 items; at most 50/);
      expect(refusal.details).toMatchObject({ deviceId: 'd', items: 51, limit: 50 });
    },
  );
});

/** A raw TCP connection to the broker; resolves `closed` with the elapsed milliseconds when the broker closes it. */
function rawConnection() {
  const socket = net.connect(t.mqttPort, '127.0.0.1');
  const started = Date.now();
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - started)));
  socket.on('error', () => undefined);
  return { socket, closed };
}

describe('listeners', () => {
  it.each(['mqttv311', 'mqttv5'])('accepts MQTT over TLS on the TLS port (%s)', async (version) => {
    const c = await createBrokerConnector(t);
    const run = await runMosquitto('mosquitto_pub', [
      '-h',
      '127.0.0.1',
      '-p',
      String(t.mqttTlsPort),
      '--cafile',
      path.join(dir, 'cert.pem'),
      '-u',
      c.username,
      '-P',
      c.password,
      '-V',
      version,
      '-q',
      '1',
      '-t',
      upTopic(c, 'tls-1'),
      '-m',
      '{"tls":true}',
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect((await storedPackets(t, c.connectorId)).map((r) => r.payload.toString())).toEqual([
      '{"tls":true}',
    ]);
  });

  it('names the variable when the MQTT port is taken', async () => {
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as net.AddressInfo).port;
    const broker = new BrokerService({
      config: { ...t.config, mqttPort: port, mqttHost: '127.0.0.1', mqttTlsPort: undefined },
      log: t.app.log,
      metrics: new Metrics({ node: 'port-clash' }),
      clock: () => new Date(),
      packets: t.services.packets,
      connectors: t.services.connectors,
    });
    try {
      await expect(broker.start()).rejects.toThrow(
        new StartupError(
          `STELLWERK_MQTT_PORT ${port} is already in use on 127.0.0.1; set STELLWERK_MQTT_PORT to a free port (0 picks one)`,
        ),
      );
    } finally {
      await broker.stop();
      busy.close();
    }
  });
});

describe('broker limits', () => {
  it('closes a connection that sends no CONNECT within the connect timeout', async () => {
    const { closed } = rawConnection();
    const ms = await closed;
    expect(ms).toBeGreaterThanOrEqual(700);
    expect(ms).toBeLessThan(3000);
  });

  it('closes a connection that starts with something other than MQTT', async () => {
    const { socket, closed } = rawConnection();
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await closed).toBeLessThan(700);
  });

  it('honours the keep-alive the client asked for: silence for 1.5 × keep-alive closes it', async () => {
    const c = await createBrokerConnector(t);
    const { socket, closed } = rawConnection();
    const connack = new Promise<number>((resolve) => {
      const parser = mqttPacket.parser();
      parser.on('packet', (p) => p.cmd === 'connack' && resolve(p.returnCode ?? -1));
      socket.on('data', (d: Buffer) => parser.parse(d));
    });
    socket.write(
      mqttPacket.generate({
        cmd: 'connect',
        protocolId: 'MQTT',
        protocolVersion: 4,
        clientId: 'keepalive-test',
        clean: true,
        keepalive: 1,
        username: c.username,
        password: Buffer.from(c.password),
      }),
    );
    expect(await connack).toBe(0);
    const ms = await closed;
    expect(ms).toBeGreaterThanOrEqual(1400);
    expect(ms).toBeLessThan(4000);
  });

  it.each([4, 5] as const)(
    'disconnects a client that sends a packet over the size limit (MQTT %s)',
    async (protocolVersion) => {
      const c = await createBrokerConnector(t);
      const client = await connectClient(`mqtt://127.0.0.1:${t.mqttPort}`, c, { protocolVersion });
      const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
      await client.publishAsync(upTopic(c, 'd'), Buffer.alloc(60_000), { qos: 1 });
      client.publish(upTopic(c, 'd'), Buffer.alloc(70_000), { qos: 1 });
      await closed;
      client.end(true);
      const rows = await storedPackets(t, c.connectorId);
      expect(rows.map((r) => r.payload.length)).toEqual([60_000]);
    },
  );
});

describe('connector lifecycle', () => {
  it('disconnects live clients when their connector is deactivated, and refuses them afterwards', async () => {
    const c = await createBrokerConnector(t);
    const client = await connectClient(`mqtt://127.0.0.1:${t.mqttPort}`, c);
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    const token = await bearer(t, ADMIN_EMAIL, { password: ADMIN_PASSWORD });
    const response = await t.app.inject({
      method: 'POST',
      url: `/xapi/v1/connectors/${c.connectorId}/deactivate`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.statusCode).toBe(200);
    await closed;
    client.end(true);
    await expect(connectClient(`mqtt://127.0.0.1:${t.mqttPort}`, c)).rejects.toThrow(
      /Bad username or password|Not authorized/i,
    );
  });
});

describe('MQTT over WebSocket at /mqtt', () => {
  it.each([4, 5] as const)(
    'stores QoS 1 packets from an mqtt.js WebSocket client (MQTT %s)',
    async (protocolVersion) => {
      const c = await createBrokerConnector(t);
      const client = await connectClient(`ws://127.0.0.1:${t.httpPort}/mqtt`, c, { protocolVersion });
      await client.publishAsync(upTopic(c, 'ws-device'), JSON.stringify({ over: 'ws' }), { qos: 1 });
      await client.endAsync();
      const rows = await storedPackets(t, c.connectorId);
      expect(rows.map((r) => [r.device_key, r.payload.toString()])).toEqual([['ws-device', '{"over":"ws"}']]);
    },
  );

  it('refuses wrong credentials over WebSocket too', async () => {
    const c = await createBrokerConnector(t);
    await expect(
      connectClient(`ws://127.0.0.1:${t.httpPort}/mqtt`, { ...c, password: 'nope' }),
    ).rejects.toThrow(/Bad username or password/i);
  });
});

describe('end to end: mosquitto_pub → packet store → driver → state visible through XAPI', () => {
  it.each(['mqttv311', 'mqttv5'])(
    'a JSON payload becomes parsed states; a binary one is decoded by its driver and kept in _raw (%s)',
    async (version) => {
      const c = await createBrokerConnector(t);
      const jsonDriver = await insertDriver(t);
      const binaryDriver = await insertDriver(t, {
        type: 'binary',
        fields: [{ key: 'temperature', offset: 0, type: 'int16', endian: 'big', scale: 0.1 }],
      });
      const meter = await insertDevice(t, {
        connectorId: c.connectorId,
        deviceKey: 'meter-1',
        driverId: jsonDriver,
      });
      const probe = await insertDevice(t, {
        connectorId: c.connectorId,
        deviceKey: 'probe-1',
        driverId: binaryDriver,
      });
      const file = path.join(dir, `probe-${version}.bin`);
      const bytes = Buffer.alloc(2);
      bytes.writeInt16BE(-123);
      await fs.writeFile(file, bytes);
      expect(
        (await pub(c, ['-V', version, '-q', '1', '-t', upTopic(c, 'meter-1'), '-m', '{"flow":3.5}'])).code,
      ).toBe(0);
      expect((await pub(c, ['-V', version, '-q', '1', '-t', upTopic(c, 'probe-1'), '-f', file])).code).toBe(
        0,
      );
      const token = await bearer(t, ADMIN_EMAIL, { password: ADMIN_PASSWORD });
      const states = async (deviceId: string) => {
        const response = await t.app.inject({
          url: `/xapi/v1/virtual-devices/${deviceId}/states`,
          headers: { authorization: `Bearer ${token}` },
        });
        expect(response.statusCode, response.body).toBe(200);
        const list = response.json<{ data: Array<{ key: string; value: unknown }> }>().data;
        return Object.fromEntries(list.map((s) => [s.key, s.value]));
      };
      expect(
        await waitFor(async () => ((await states(meter)).flow !== undefined ? states(meter) : undefined)),
      ).toMatchObject({
        flow: 3.5,
        _parsed: { flow: 3.5 },
      });
      // The driver's binary layout decodes the two's-complement int16; `_raw` keeps the bytes (base64).
      expect(
        await waitFor(async () => ((await states(probe))._raw !== undefined ? states(probe) : undefined)),
      ).toMatchObject({ _raw: bytes.toString('base64'), temperature: -12.3 });
    },
  );

  it('parses the packets of a device registered after its first packet arrived unknown', async () => {
    const c = await createBrokerConnector(t);
    const driverId = await insertDriver(t);
    const first = await pub(c, ['-q', '1', '-t', upTopic(c, 'late-1'), '-m', '{"level":1}']);
    expect(first.code).toBe(0);
    await waitFor(async () => {
      const rows = await storedPackets(t, c.connectorId);
      return rows.length === 1 ? rows : undefined;
    });
    // Let the pipeline see it as unknown (and cache that) before the device exists.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const device = await insertDevice(t, { connectorId: c.connectorId, deviceKey: 'late-1', driverId });
    expect((await pub(c, ['-q', '1', '-t', upTopic(c, 'late-1'), '-m', '{"level":2}'])).code).toBe(0);
    const token = await bearer(t, ADMIN_EMAIL, { password: ADMIN_PASSWORD });
    const level = await waitFor(async () => {
      const response = await t.app.inject({
        url: `/xapi/v1/virtual-devices/${device}/states`,
        headers: { authorization: `Bearer ${token}` },
      });
      const list = response.json<{ data: Array<{ key: string; value: unknown }> }>().data;
      return list.find((s) => s.key === 'level')?.value;
    });
    expect(level).toBe(2);
  });
});
