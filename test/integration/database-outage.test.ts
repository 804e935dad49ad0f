import mqtt from 'mqtt';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../server/src/platform/crypto/ids.js';
import { startBrokerApp, type BrokerTestApp } from './support/broker.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD } from './support/test-app.js';
import { waitFor } from './support/wait.js';

/**
 * An external PostgreSQL (DATABASE_URL) that becomes unreachable and comes back: there is nothing to
 * restart, but `/health` and `/xapi/v1/health` answer 503 meanwhile, the API answers 503
 * DATABASE_UNAVAILABLE instead of 500, devices this node let in before may reconnect and publish
 * (their packets are spooled and reach `packets` afterwards), and the pools reconnect without a server
 * restart. The outage is a real TCP proxy between the server and its database, cut and restored.
 */

interface Credentials {
  id: string;
  credentials: { username: string; password: string };
}

const MAX_PENDING = 100;
const proxy = new TcpProxy();
let t: BrokerTestApp;
let token: string;

beforeAll(async () => {
  await proxy.listen();
  t = await startBrokerApp({
    databaseUrl: (url) => proxy.route(url),
    env: { STELLWERK_INGEST_MAX_PENDING: String(MAX_PENDING) },
  });
  await t.ctx.database.start();
  const login = await t.app.inject({
    method: 'POST',
    url: '/xapi/v1/auth/login',
    payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
  });
  token = login.json<{ token: string }>().token;
});
afterAll(async () => {
  await proxy.restore().catch(() => undefined);
  await t.ctx.database.stop();
  await t.closeAll();
  await proxy.close();
});

const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
  t.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(payload ? { payload } : {}),
  });

const healthStatus = async () => (await t.app.inject({ url: '/health' })).statusCode;

const createConnector = async (title: string) =>
  (await call('POST', '/xapi/v1/connectors', { title, type: 'mqtt-broker' })).json<Credentials>();

/** Connects as a device; resolves with the client, or with the CONNACK return code of a refusal. */
async function connect(username: string, password: string): Promise<mqtt.MqttClient | number> {
  try {
    return await mqtt.connectAsync(`mqtt://127.0.0.1:${t.mqttPort}`, {
      clientId: `outage-${newId().slice(-12)}`,
      username,
      password,
      reconnectPeriod: 0,
      connectTimeout: 5000,
    });
  } catch (error) {
    return (error as { code?: number }).code ?? -1;
  }
}

describe('an external database that becomes unreachable', () => {
  it('answers 503 while it is gone, lets known devices publish, and recovers without a restart', async () => {
    expect(await healthStatus()).toBe(200);
    expect((await call('GET', '/xapi/v1/connectors')).statusCode).toBe(200);
    const device = await createConnector('outage');
    const deactivated = await createConnector('deactivated before the outage');
    const neverSeen = await createConnector('never connected');
    // Logins this node verified while the database answered.
    for (const c of [device, deactivated]) {
      const client = await connect(c.credentials.username, c.credentials.password);
      expect(typeof client).toBe('object');
      await (client as mqtt.MqttClient).endAsync();
    }
    expect((await call('POST', `/xapi/v1/connectors/${deactivated.id}/deactivate`)).statusCode).toBe(200);

    await proxy.cut();
    await waitFor(async () => ((await healthStatus()) === 503 ? true : undefined), 5000, {
      what: '/health 503',
    });
    expect((await t.app.inject({ url: '/health' })).json()).toMatchObject({
      status: 'unavailable',
      database: 'unreachable',
    });

    const list = await call('GET', '/xapi/v1/connectors');
    expect(list.statusCode).toBe(503);
    expect(list.headers['retry-after']).toBe('5');
    expect(list.json()).toMatchObject({ error: { code: 'DATABASE_UNAVAILABLE' } });
    const login = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/auth/login',
      payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    });
    expect(login.statusCode).toBe(503);
    expect(login.json()).toMatchObject({ error: { code: 'DATABASE_UNAVAILABLE' } });
    const check = await t.app.inject({ url: '/xapi/v1/health' });
    expect(check.statusCode).toBe(503);
    expect(check.json()).toMatchObject({
      status: 'degraded',
      database: { status: 'failed', message: 'database unreachable' },
    });

    // A device this node let in reconnects and publishes; the spool acknowledges.
    const client = await connect(device.credentials.username, device.credentials.password);
    expect(typeof client).toBe('object');
    const ids = Array.from({ length: 20 }, () => newId());
    for (const id of ids) {
      await (client as mqtt.MqttClient).publishAsync(
        `connectors/${device.id}/devices/outage-device/up`,
        JSON.stringify({ id }),
        { qos: 1 },
      );
    }
    await (client as mqtt.MqttClient).endAsync();
    // The spool's backlog stays bounded: beyond STELLWERK_INGEST_MAX_PENDING it refuses (no PUBACK).
    const refusals: string[] = [];
    for (let i = 0; i < MAX_PENDING; i++) {
      const id = newId();
      await t.services.packets
        .append({
          connectorId: device.id,
          deviceKey: 'outage-device',
          payload: Buffer.from(JSON.stringify({ id })),
          source: 'mqtt',
          receivedAt: new Date(),
        })
        .then(
          () => ids.push(id),
          (error: { code?: string }) => refusals.push(error.code ?? 'unknown'),
        );
    }
    expect(ids).toHaveLength(MAX_PENDING);
    expect(refusals).toEqual(Array(20).fill('INGEST_BUSY'));
    // Nobody else: a wrong password, a connector deactivated here, one never verified (3: server unavailable).
    expect(await connect(device.credentials.username, `${device.credentials.password}x`)).toBe(3);
    expect(await connect(deactivated.credentials.username, deactivated.credentials.password)).toBe(3);
    expect(await connect(neverSeen.credentials.username, neverSeen.credentials.password)).toBe(3);

    await proxy.restore();
    await waitFor(async () => ((await healthStatus()) === 200 ? true : undefined), 10_000, {
      what: '/health 200 again',
    });
    expect((await call('GET', '/xapi/v1/connectors')).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/xapi/v1/health' })).statusCode).toBe(200);
    // With the database back, it decides again: the deactivated connector is refused as such (4).
    expect(await connect(deactivated.credentials.username, deactivated.credentials.password)).toBe(4);

    const sql = new pg.Client({ connectionString: t.config.databaseUrl });
    await sql.connect();
    try {
      await waitFor(
        async () => {
          const { rows } = await sql.query<{ id: string }>(
            `SELECT convert_from(payload, 'UTF8')::jsonb ->> 'id' AS id FROM packets WHERE connector_id = $1`,
            [device.id],
          );
          const stored = new Set(rows.map((r) => r.id));
          return ids.every((id) => stored.has(id)) ? true : undefined;
        },
        20_000,
        { intervalMs: 200, what: 'the packets published during the outage in packets' },
      );
    } finally {
      await sql.end();
    }
  }, 60_000);
});
