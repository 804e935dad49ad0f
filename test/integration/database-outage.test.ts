import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../server/src/platform/crypto/ids.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';

/**
 * An external PostgreSQL (DATABASE_URL) that becomes unreachable and comes back: there is nothing to
 * restart, but `/health` and `/xapi/v1/health` answer 503 meanwhile, the API answers 503
 * DATABASE_UNAVAILABLE instead of 500, packets accepted meanwhile reach `packets` afterwards, and the
 * pools reconnect without a server restart. The outage is a real TCP proxy between server and database.
 */

const proxy = new TcpProxy();
let t: TestApp;
let token: string;

beforeAll(async () => {
  await proxy.listen();
  t = await createTestApp({ databaseUrl: (url) => proxy.route(url) });
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
  await t.close();
  await proxy.close();
});

const get = (url: string, auth = true) =>
  t.app.inject({ url, headers: auth ? { authorization: `Bearer ${token}` } : {} });

const healthStatus = async () => (await get('/health', false)).statusCode;

describe('an external database that becomes unreachable', () => {
  it('answers 503 while it is gone, keeps accepting packets, and recovers without a restart', async () => {
    expect(await healthStatus()).toBe(200);
    expect((await get('/xapi/v1/connectors')).statusCode).toBe(200);
    const connector = (
      await t.app.inject({
        method: 'POST',
        url: '/xapi/v1/connectors',
        headers: { authorization: `Bearer ${token}` },
        payload: { title: 'outage', type: 'mqtt-broker' },
      })
    ).json<{ id: string }>();

    await proxy.cut();
    await waitFor(async () => ((await healthStatus()) === 503 ? true : undefined), 5000, {
      what: '/health 503',
    });
    const health = await get('/health', false);
    expect(health.json()).toMatchObject({ status: 'unavailable', database: 'unreachable' });

    const list = await get('/xapi/v1/connectors');
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
    const check = await get('/xapi/v1/health', false);
    expect(check.statusCode).toBe(503);
    expect(check.json()).toMatchObject({
      status: 'degraded',
      database: { status: 'failed', message: 'database unreachable' },
    });

    // The spool acknowledges while the database is gone.
    const ids = Array.from({ length: 20 }, () => newId());
    for (const id of ids) {
      await t.services.packets.append({
        connectorId: connector.id,
        deviceKey: 'outage-device',
        payload: Buffer.from(JSON.stringify({ id })),
        source: 'mqtt',
        receivedAt: new Date(),
      });
    }

    await proxy.restore();
    await waitFor(async () => ((await healthStatus()) === 200 ? true : undefined), 10_000, {
      what: '/health 200 again',
    });
    expect((await get('/xapi/v1/connectors')).statusCode).toBe(200);
    expect((await get('/xapi/v1/health', false)).statusCode).toBe(200);

    const sql = new pg.Client({ connectionString: t.config.databaseUrl });
    await sql.connect();
    try {
      await waitFor(
        async () => {
          const { rows } = await sql.query<{ id: string }>(
            `SELECT convert_from(payload, 'UTF8')::jsonb ->> 'id' AS id FROM packets WHERE connector_id = $1`,
            [connector.id],
          );
          const stored = new Set(rows.map((r) => r.id));
          return ids.every((id) => stored.has(id)) ? true : undefined;
        },
        20_000,
        { intervalMs: 200, what: 'the packets accepted during the outage in packets' },
      );
    } finally {
      await sql.end();
    }
  }, 60_000);
});
