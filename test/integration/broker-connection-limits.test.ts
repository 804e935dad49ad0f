import net from 'node:net';
import mqttPacket from 'mqtt-packet';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { json } from './support/test-app.js';
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

/**
 * Per-connector and per-account MQTT connection limits (small ones here: 3 per connector, 5 per
 * account): CONNECT beyond them is refused with "server unavailable" (MQTT 5: 0x97 quota exceeded),
 * the connector log says why at most once per window, and other tenants keep connecting. A CONNECT
 * flood's credential checks take at most 4 database connections at once. The broker-wide cap derived
 * from the open-file limit is broker-connection-cap.test.ts.
 */

let t: BrokerTestApp;
let call: ReturnType<typeof caller>;
const open: MqttClient[] = [];

beforeAll(async () => {
  t = await startBrokerApp({
    env: {
      STELLWERK_MQTT_MAX_CONNECTIONS_PER_CONNECTOR: '3',
      STELLWERK_MQTT_MAX_CONNECTIONS_PER_ACCOUNT: '5',
    },
  });
  call = caller(t, bearer(await login(t)));
});
afterAll(async () => {
  for (const client of open) client.end(true);
  await t?.closeAll();
});

async function account(title: string, parentId = t.rootAccountId): Promise<string> {
  return expectStatus<{ id: string }>(await call('POST', '/xapi/v1/accounts', { title, parentId }), 201).id;
}

const url = () => `mqtt://127.0.0.1:${t.mqttPort}`;
async function client(c: BrokerCredentials, options: Parameters<typeof connectClient>[2] = {}) {
  const connected = await connectClient(url(), c, options);
  open.push(connected);
  return connected;
}

const limitLogs = async (connectorId: string) =>
  (
    await t.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ level: string; message: string; details: Record<string, unknown> }>>(
        'SELECT level, message, details FROM connector_logs WHERE connector_id = ? ORDER BY created_at',
        [connectorId],
      )
  ).filter((l) => l.details.code === 'CONNECTION_LIMIT');

const refusedTotal = async (reason: string) => {
  const text = (await t.app.inject({ url: '/metrics' })).body;
  const line = text
    .split('\n')
    .find((l) => l.startsWith('stellwerk_broker_connections_closed_total{') && l.includes(`"${reason}"`));
  return Number(line?.split(' ').pop() ?? 0);
};

describe('per connector', () => {
  it('refuses clients beyond the limit (3.1.1 server unavailable, 5 quota exceeded) and logs it once per window', async () => {
    const c = await createBrokerConnector(t, { accountId: await account('Tenant 1') });
    for (let i = 0; i < 3; i++) await client(c, { clientId: `gw-${i}` });
    await expect(connectClient(url(), c, { clientId: 'gw-3' })).rejects.toThrow(/Server unavailable/);
    await expect(connectClient(url(), c, { clientId: 'gw-4', protocolVersion: 5 })).rejects.toThrow(
      /Quota exceeded/,
    );
    const pub = (version: string) =>
      runMosquitto('mosquitto_pub', [
        ...['-h', '127.0.0.1', '-p', String(t.mqttPort), '-u', c.username, '-P', c.password],
        ...['-V', version, '-t', upTopic(c, 'd'), '-m', '{}', '-q', '1'],
      ]);
    const v311 = await pub('mqttv311');
    expect({ code: v311.code, stderr: v311.stderr.trim() }).toEqual({
      code: 3,
      stderr: 'Connection error: Connection Refused: broker unavailable.\nError: The connection was refused.',
    });
    const v5 = await pub('mqttv5');
    expect(v5.code).not.toBe(0);
    expect(v5.stderr).toMatch(/quota exceeded/i);
    // A flood of refusals: still one connector log entry in the window.
    const flood = Array.from({ length: 20 }, (_, i) =>
      connectClient(url(), c, { clientId: `flood-${i}` }).then(
        () => 'connected',
        (error: Error) => error.message,
      ),
    );
    expect(new Set(await Promise.all(flood))).toEqual(new Set(['Connection refused: Server unavailable']));
    const logs = await waitFor(async () => {
      const l = await limitLogs(c.connectorId);
      return l.length ? l : undefined;
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(await limitLogs(c.connectorId)).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      level: 'warn',
      message: "Connection refused: this connector's limit of 3 connected clients is reached",
      details: { code: 'CONNECTION_LIMIT', scope: 'connector', limit: 3, clientId: 'gw-3' },
    });
    expect(await refusedTotal('connector-limit')).toBeGreaterThanOrEqual(23);
  });

  it('admits a takeover of a live client id at the limit, and a new client once a slot is free', async () => {
    const c = await createBrokerConnector(t, { accountId: await account('Tenant 2') });
    const clients: MqttClient[] = [];
    for (let i = 0; i < 3; i++) clients.push(await client(c, { clientId: `gw-${i}` }));
    const replaced = new Promise<void>((resolve) => clients[0]!.once('close', () => resolve()));
    const takeover = await client(c, { clientId: 'gw-0' });
    await replaced;
    await takeover.publishAsync(upTopic(c, 'd'), '{"takeover":true}', { qos: 1 });
    await expect(connectClient(url(), c, { clientId: 'gw-new' })).rejects.toThrow(/Server unavailable/);
    await clients[1]!.endAsync();
    await waitFor(async () => (t.services.broker.clientCount(c.connectorId) === 2 ? true : undefined));
    const fresh = await client(c, { clientId: 'gw-new' });
    await fresh.publishAsync(upTopic(c, 'd'), '{"fresh":true}', { qos: 1 });
    expect((await storedPackets(t, c.connectorId)).map((p) => p.payload.toString())).toEqual([
      '{"takeover":true}',
      '{"fresh":true}',
    ]);
  });

  it("takes the connector's own maxConnections setting, validated by the API", async () => {
    const created = expectStatus<{ id: string; credentials: { username: string; password: string } }>(
      await call('POST', '/xapi/v1/connectors', {
        type: 'mqtt-broker',
        title: 'One-client gateway',
        accountId: await account('Tenant 3'),
        config: { maxConnections: 1 },
      }),
      201,
    );
    const c = { connectorId: created.id, ...created.credentials };
    const invalid = await call('PUT', `/xapi/v1/connectors/${c.connectorId}`, {
      config: { maxConnections: 0 },
    });
    expect(invalid.statusCode, invalid.body).toBe(400);
    expect(invalid.body).toContain('/config/maxConnections');
    await client(c);
    await expect(connectClient(url(), c)).rejects.toThrow(/Server unavailable/);
    // Raised above the instance default: the connector's setting wins (the account's 5 still applies).
    expectStatus(
      await call('PUT', `/xapi/v1/connectors/${c.connectorId}`, { config: { maxConnections: 4 } }),
      200,
    );
    for (let i = 0; i < 3; i++) await client(c);
    await expect(connectClient(url(), c)).rejects.toThrow(/Server unavailable/);
    const logs = await waitFor(async () => {
      const l = await limitLogs(c.connectorId);
      return l.length ? l : undefined;
    });
    expect(logs[0]!.details).toMatchObject({ scope: 'connector', limit: 1 });
  });
});

describe('per account', () => {
  it('counts an account with its sub-accounts; other tenants keep connecting and publishing', async () => {
    const tenant = await account('Tenant 4');
    const sub = await account('Tenant 4 site', tenant);
    const own = await createBrokerConnector(t, { accountId: tenant });
    const site = await createBrokerConnector(t, { accountId: sub });
    const other = await createBrokerConnector(t, { accountId: await account('Tenant 5') });
    for (let i = 0; i < 3; i++) await client(own);
    for (let i = 0; i < 2; i++) await client(site);
    await expect(connectClient(url(), site)).rejects.toThrow(/Server unavailable/);
    await expect(connectClient(url(), own, { protocolVersion: 5 })).rejects.toThrow(/Quota exceeded/);
    const logs = await waitFor(async () => {
      const l = await limitLogs(site.connectorId);
      return l.length ? l : undefined;
    });
    expect(logs[0]).toMatchObject({
      message: "Connection refused: the account's limit of 5 connected MQTT clients is reached",
      details: { scope: 'account', limit: 5 },
    });
    // The account id that is full is not named: a sub-account must not learn its ancestors.
    expect(JSON.stringify(logs[0])).not.toContain(tenant);

    for (let i = 0; i < 3; i++) {
      const c = await client(other, { protocolVersion: i === 0 ? 5 : 4 });
      await c.publishAsync(upTopic(other, `d${i}`), `{"i":${i}}`, { qos: 1 });
    }
    expect(await storedPackets(t, other.connectorId)).toHaveLength(3);
    expect(json<{ status: string }>(await t.app.inject({ url: '/xapi/v1/health' })).status).toBe('ok');
  });
});

describe('credential checks', () => {
  it('runs at most 4 at once, so a CONNECT flood leaves the database pool to everything else', async () => {
    const c = await createBrokerConnector(t, { accountId: await account('Tenant 6') });
    const connectors = t.services.connectors;
    const check = connectors.authenticateBroker.bind(connectors);
    let inFlight = 0;
    let most = 0;
    // Counts the real checks in flight; each still goes to the database, after a pause as if it were
    // busy, so the flood's checks overlap however fast this machine answers them.
    connectors.authenticateBroker = async (username, password) => {
      most = Math.max(most, ++inFlight);
      try {
        await new Promise((resolve) => setTimeout(resolve, 25));
        return await check(username, password);
      } finally {
        inFlight--;
      }
    };
    try {
      const connacks = Array.from({ length: 60 }, (_, i) => {
        const socket = net.connect(t.mqttPort, '127.0.0.1');
        socket.on('error', () => undefined);
        const parser = mqttPacket.parser();
        const code = new Promise<number>((resolve) =>
          parser.on('packet', (p) => p.cmd === 'connack' && resolve(p.returnCode ?? -1)),
        );
        socket.on('data', (data: Buffer) => parser.parse(data));
        socket.write(
          mqttPacket.generate({
            ...{ cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clean: true, keepalive: 0 },
            clientId: `flood-${i}`,
            username: c.username,
            password: Buffer.from(i % 2 ? c.password : 'wrong'),
          }),
        );
        return code.finally(() => socket.destroy());
      });
      // The API answers while the flood waits for its turn.
      expect((await call('GET', `/xapi/v1/connectors/${c.connectorId}`)).statusCode).toBe(200);
      const codes = await Promise.all(connacks);
      expect(codes.filter((code) => code === 4)).toHaveLength(30);
      expect(codes.filter((code) => code === 0 || code === 3)).toHaveLength(30);
      expect(most).toBe(4);
    } finally {
      connectors.authenticateBroker = check;
    }
  });
});
