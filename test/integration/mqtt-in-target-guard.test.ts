import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, login, type Credentials } from './support/identity.js';
import { createConnector } from './support/connectors.js';
import { freePort, startMosquitto, type Mosquitto } from './support/mosquitto.js';
import { connectorLogs, type LogEntry } from './support/outgoing.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';

/**
 * mqtt-in dials the tenant's broker through the same SSRF protection as the outgoing kinds, and
 * its connector log says the same words whatever kept the connection from coming up.
 */

let broker: Mosquitto;
let websocketPort: number;
beforeAll(async () => {
  websocketPort = await freePort();
  broker = await startMosquitto(() =>
    Promise.resolve([
      'allow_anonymous true',
      `listener ${websocketPort} 127.0.0.1`,
      'protocol websockets',
      'allow_anonymous true',
    ]),
  );
});
afterAll(async () => {
  await broker?.stop();
});

const mqttIn = (t: TestApp, admin: Credentials, url: string) =>
  createConnector(t, admin, { type: 'mqtt-in', config: { url, topics: ['plant/+/up'] } });

/** The connector's first error entry, as the tenant reads it. */
const firstError = (t: TestApp, token: string, id: string, timeoutMs = 10_000): Promise<LogEntry> =>
  waitFor(
    async () => (await connectorLogs(t, token, id)).find((entry) => entry.level === 'error'),
    timeoutMs,
    { what: `an error in the log of ${id}` },
  );

describe('mqtt-in without STELLWERK_OUTGOING_ALLOW_PRIVATE', () => {
  let strict: TestApp;
  let token: string;
  beforeAll(async () => {
    strict = await createTestApp({ env: { STELLWERK_OUTGOING_ALLOW_PRIVATE: '' } });
    token = await login(strict);
  });
  afterAll(async () => {
    await strict?.close();
  });

  it('refuses a broker on loopback and never connects to it', async () => {
    for (const host of ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]']) {
      const url = `mqtt://${host}:${broker.port}`;
      const connector = await mqttIn(strict, bearer(token), url);
      const entry = await firstError(strict, token, connector.id);
      expect(entry, url).toMatchObject({ details: { code: 'OUTGOING_TARGET_REFUSED' } });
      expect(entry.message).toContain('STELLWERK_OUTGOING_ALLOW_PRIVATE');
      expect(strict.services.mqttIn.isReady(connector.id)).toBe(false);
      const messages = (await connectorLogs(strict, token, connector.id)).map((e) => e.message);
      expect(messages.filter((m) => m.startsWith('Connected'))).toEqual([]);
      await strict.services.mqttIn.stopClient(connector.id);
    }
  });

  it('refuses private, link-local and unique-local brokers before any socket is opened', async () => {
    for (const url of [
      'mqtt://10.1.2.3:1883',
      'mqtts://192.168.0.10:8883',
      'mqtt://169.254.169.254:1883',
      'ws://172.16.0.1:8080/mqtt',
      'mqtt://[fd00::1]:1883',
    ]) {
      const connector = await mqttIn(strict, bearer(token), url);
      const entry = await firstError(strict, token, connector.id);
      expect(entry, url).toMatchObject({ details: { code: 'OUTGOING_TARGET_REFUSED' } });
      await strict.services.mqttIn.stopClient(connector.id);
    }
  });
});

describe('mqtt-in with the allowance (127.0.0.0/8)', () => {
  let t: TestApp;
  let token: string;
  const servers: net.Server[] = [];
  beforeAll(async () => {
    t = await createTestApp();
    token = await login(t);
  });
  afterAll(async () => {
    for (const server of servers) server.close();
    await t?.close();
  });

  const listen = async (onConnection: (socket: net.Socket) => void): Promise<number> => {
    const server = net.createServer(onConnection);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as net.AddressInfo).port;
  };

  it('connects to the allowed broker, over TCP and over WebSocket', async () => {
    for (const url of [`mqtt://127.0.0.1:${broker.port}`, `ws://127.0.0.1:${websocketPort}/mqtt`]) {
      const connector = await mqttIn(t, bearer(token), url);
      await waitFor(async () => (t.services.mqttIn.isReady(connector.id) ? true : undefined), 10_000, {
        what: `mqtt-in subscription over ${url}`,
      });
      await t.services.mqttIn.stopClient(connector.id);
    }
  });

  it('tells a tenant the same for a closed port, a port that is no MQTT broker, a failed TLS handshake and a broker that never answers', async () => {
    const closed = await freePort();
    const notMqtt = await listen((socket) => {
      socket.on('error', () => undefined);
      socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    });
    const silent = await listen((socket) => socket.on('error', () => undefined));
    const cases = {
      closed: `mqtt://127.0.0.1:${closed}`,
      notMqtt: `mqtt://127.0.0.1:${notMqtt}`,
      tlsToPlain: `mqtts://127.0.0.1:${notMqtt}`,
      silent: `mqtt://127.0.0.1:${silent}`,
    };
    const entries = await Promise.all(
      Object.entries(cases).map(async ([name, url]) => {
        const connector = await mqttIn(t, bearer(token), url);
        // The silent broker is given up after the client's connect timeout (10 s).
        const entry = await firstError(t, token, connector.id, 20_000);
        await t.services.mqttIn.stopClient(connector.id);
        return [name, { level: entry.level, message: entry.message, details: entry.details }] as const;
      }),
    );
    const [first, ...others] = entries.map(([, entry]) => entry);
    for (const [name, entry] of entries) expect(entry, name).toEqual(first);
    expect(others).toHaveLength(3);
    expect(first!.message).not.toMatch(/ECONN|refused|timeout|timed out|reset|header|127\.0\.0\.1/i);
  }, 40_000);
});
