import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { Account } from '../../../server/src/accounts/account.entity.js';
import { Connector } from '../../../server/src/connectors/connector.entity.js';
import { sha256 } from '../../../server/src/platform/crypto/tokens.js';
import { login } from './identity.js';
import { createTestApp, json, type TestApp, type TestAppOptions } from './test-app.js';
import { packetsSettled } from './connectors.js';

/** The real server with its broker on free ports of 127.0.0.1: TCP, and WebSocket on the HTTP port. */
export interface BrokerTestApp extends TestApp {
  mqttPort: number;
  mqttTlsPort: number | undefined;
  httpPort: number;
  /** Stops the broker, then everything createTestApp started. */
  closeAll(): Promise<void>;
}

export async function startBrokerApp(options: TestAppOptions = {}): Promise<BrokerTestApp> {
  const t = await createTestApp({
    ...options,
    env: { STELLWERK_MQTT_PORT: '0', STELLWERK_MQTT_HOST: '127.0.0.1', ...options.env },
  });
  await t.services.broker.start();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  return {
    ...t,
    mqttPort: t.services.broker.ports.mqtt!,
    mqttTlsPort: t.services.broker.ports.mqtts,
    httpPort: typeof address === 'object' && address ? address.port : 0,
    closeAll: async () => {
      await t.services.broker.stop();
      await t.services.connectorTelemetry.stop();
      await t.close();
    },
  };
}

export interface BrokerCredentials {
  connectorId: string;
  username: string;
  password: string;
}

/** An `mqtt-broker` connector made through the entity, as the connectors domain stores one. */
export async function createBrokerConnector(
  t: TestApp,
  options: { accountId?: string; active?: boolean; title?: string } = {},
): Promise<BrokerCredentials> {
  const em = t.orm.em.fork();
  const username = `mqtt-${randomBytes(6).toString('hex')}`;
  const password = randomBytes(32).toString('base64url');
  const connector = new Connector();
  connector.account = em.getReference(Account, options.accountId ?? t.rootAccountId);
  connector.title = options.title ?? 'Gateway';
  connector.type = 'mqtt-broker';
  connector.active = options.active ?? true;
  connector.brokerUsername = username;
  connector.brokerPasswordHash = sha256(password);
  await em.persistAndFlush(connector);
  return { connectorId: connector.id, username, password };
}

export const upTopic = (c: BrokerCredentials, device: string) =>
  `connectors/${c.connectorId}/devices/${device}/up`;
export const downTopic = (c: BrokerCredentials, device: string) =>
  `connectors/${c.connectorId}/devices/${device}/down`;

/** Resolves with the connected mqtt.js client, rejects with the CONNACK refusal; never reconnects. */
export function connectClient(url: string, c: Partial<BrokerCredentials>, options: IClientOptions = {}) {
  return new Promise<MqttClient>((resolve, reject) => {
    const client = mqtt.connect(url, {
      username: c.username,
      password: c.password,
      reconnectPeriod: 0,
      connectTimeout: 5000,
      ...options,
    });
    client.once('connect', () => resolve(client));
    client.once('error', (error) => {
      client.end(true);
      reject(error);
    });
    client.once('close', () => reject(new Error('connection closed before CONNACK')));
  });
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a Debian mosquitto client tool (mosquitto_pub, mosquitto_sub). */
export function runMosquitto(tool: string, args: string[], timeoutMs = 15_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Rows of `packets` of one connector, oldest first. */
export async function storedPackets(
  t: TestApp,
  connectorId: string,
): Promise<Array<{ device_key: string; payload: Buffer; source: string }>> {
  await packetsSettled(t);
  return t.orm.em
    .fork()
    .getConnection()
    .execute('SELECT device_key, payload, source FROM packets WHERE connector_id = ? ORDER BY id', [
      connectorId,
    ]);
}

/** A broker app with two sibling tenants, each with an `mqtt-broker` connector, and their clients. */
export interface TwoTenantBroker {
  t: BrokerTestApp;
  A: BrokerCredentials;
  B: BrokerCredentials;
  url: string;
  /** A connected client; ended by `close`. */
  client(c: BrokerCredentials, options?: IClientOptions): Promise<MqttClient>;
  close(): Promise<void>;
}

export async function startTwoTenantBroker(): Promise<TwoTenantBroker> {
  const t = await startBrokerApp();
  const token = await login(t);
  const account = async (title: string) => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/accounts',
      headers: { authorization: `Bearer ${token}` },
      payload: { title, parentId: t.rootAccountId },
    });
    if (response.statusCode !== 201) throw new Error(`account: ${response.statusCode} ${response.body}`);
    return json<{ id: string }>(response).id;
  };
  const A = await createBrokerConnector(t, { accountId: await account('Tenant A'), title: 'A gateway' });
  const B = await createBrokerConnector(t, { accountId: await account('Tenant B'), title: 'B gateway' });
  const url = `mqtt://127.0.0.1:${t.mqttPort}`;
  const open: MqttClient[] = [];
  return {
    t,
    A,
    B,
    url,
    async client(c, options = {}) {
      const connected = await connectClient(url, c, options);
      open.push(connected);
      return connected;
    },
    async close() {
      for (const client of open) client.end(true);
      await t.closeAll();
    },
  };
}

/** Messages a client receives, with their topics, as they arrive. */
export function inbox(c: MqttClient): Array<[string, string]> {
  const received: Array<[string, string]> = [];
  c.on('message', (topic, payload) => received.push([topic, payload.toString()]));
  return received;
}
