import fs from 'node:fs/promises';
import path from 'node:path';
import mqtt from 'mqtt';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PACKET_STATUS_SQL } from '../../server/src/ingest/commit-batch.stage.js';
import { freePort } from '../../server/src/platform/db/embedded-postgres.js';
import {
  isAlive,
  killSpawnedServers,
  sleep,
  startServer,
  tempDataDir,
  type ServerProcess,
} from './support/server-process.js';
import { waitFor } from './support/wait.js';

/**
 * The embedded PostgreSQL is killed (SIGKILL of the postmaster) while devices publish QoS 1 to a real
 * server process. The server restarts it by itself: `/health` answers 503 while it is gone and 200 once
 * it is back, the API answers 503 DATABASE_UNAVAILABLE meanwhile, the spool keeps acknowledging, every
 * acknowledged message is in `packets` afterwards, and the leader locks are held again.
 */

const ADMIN = { email: 'restart@stellwerk.test', password: 'database restart test password' };
const PUBLISHERS = 3;

const dirs: string[] = [];
afterAll(async () => {
  killSpawnedServers();
  for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
});

interface Reply {
  status: number;
  headers: Headers;
  body: { status?: string; database?: unknown; error?: { code: string }; token?: string };
}

async function api(
  base: string,
  route: string,
  init: { token?: string; body?: unknown } = {},
): Promise<Reply> {
  const response = await fetch(`${base}${route}`, {
    method: init.body === undefined ? 'GET' : 'POST',
    headers: {
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Reply['body'],
  };
}

async function postmasterPid(dataDir: string): Promise<number> {
  const text = await fs.readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8');
  return Number(text.split('\n')[0]);
}

/** A connection to the server's embedded database, as an operator would open one. */
async function openSql(dataDir: string, port: number): Promise<pg.Client> {
  const password = (await fs.readFile(path.join(dataDir, 'postgres.password'), 'utf8')).trim();
  const client = new pg.Client({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    password,
    database: 'stellwerk',
  });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Session-level advisory locks held in the database (leader locks), as `classid:objid:objsubid`. */
async function advisoryLocks(sql: pg.Client): Promise<Set<string>> {
  const { rows } = await sql.query<{ key: string }>(
    `SELECT classid || ':' || objid || ':' || objsubid AS key FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return new Set(rows.map((r) => r.key));
}

describe('embedded PostgreSQL supervision', () => {
  it('restarts a killed postmaster by itself and loses no acknowledged QoS 1 message', async () => {
    const dataDir = await tempDataDir('stellwerk-db-restart-');
    dirs.push(dataDir);
    const pgPort = await freePort();
    const mqttPort = await freePort();
    const server: ServerProcess = await startServer({
      STELLWERK_DATA_DIR: dataDir,
      STELLWERK_PG_PORT: String(pgPort),
      STELLWERK_MQTT_PORT: String(mqttPort),
      STELLWERK_ADMIN_EMAIL: ADMIN.email,
      STELLWERK_ADMIN_PASSWORD: ADMIN.password,
    });
    const base = server.baseUrl;
    const token = (await api(base, '/xapi/v1/auth/login', { body: ADMIN })).body.token!;
    const connector = (
      await api(base, '/xapi/v1/connectors', { token, body: { title: 'restart', type: 'mqtt-broker' } })
    ).body as unknown as { id: string; credentials: { username: string; password: string } };

    // Publishers: paced QoS 1 messages with unique ids, each remembered once PUBACKed.
    const acked = new Map<string, number>();
    const clients = await Promise.all(
      Array.from({ length: PUBLISHERS }, (_, i) =>
        mqtt.connectAsync(`mqtt://127.0.0.1:${mqttPort}`, {
          clientId: `restart-${i}`,
          username: connector.credentials.username,
          password: connector.credentials.password,
          reconnectPeriod: 200,
        }),
      ),
    );
    let publishing = true;
    let sent = 0;
    const loops = clients.map(async (client, i) => {
      client.on('error', () => undefined);
      const topic = `connectors/${connector.id}/devices/dev-${i}/up`;
      for (let seq = 0; publishing; seq++) {
        const id = `${i}-${seq}`;
        sent++;
        client.publish(topic, JSON.stringify({ id }), { qos: 1 }, (error) => {
          if (!error) acked.set(id, Date.now());
        });
        await sleep(10);
      }
    });

    const sql = await openSql(dataDir, pgPort);
    await waitFor(async () => ((await advisoryLocks(sql)).size >= 2 ? true : undefined), 20_000, {
      what: 'leader locks',
    });
    const locksBefore = await advisoryLocks(sql);
    await sql.end();
    await sleep(1000);

    const killedPid = await postmasterPid(dataDir);
    const ackedBeforeKill = acked.size;
    const killedAt = Date.now();
    process.kill(killedPid, 'SIGKILL');

    // /health turns 503 with a body naming the database; the API answers 503 meanwhile.
    const down = await waitFor(
      async () => {
        const health = await api(base, '/health');
        return health.status === 200 ? undefined : health;
      },
      5000,
      { intervalMs: 20, what: '/health to turn non-200' },
    );
    const downAt = Date.now();
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ status: 'unavailable', database: 'unreachable' });
    const during = await api(base, '/xapi/v1/connectors', { token });
    const healthCheck = await api(base, '/xapi/v1/health');

    // It comes back by itself: a new postmaster, /health 200 again.
    await waitFor(async () => ((await api(base, '/health')).status === 200 ? true : undefined), 30_000, {
      intervalMs: 50,
      what: '/health to return to 200',
    });
    const upAt = Date.now();
    const restartedPid = await postmasterPid(dataDir);
    const ackedDuringOutage = [...acked.values()].filter((at) => at > downAt && at < upAt).length;
    expect(during.status).toBe(503);
    expect(during.body.error?.code).toBe('DATABASE_UNAVAILABLE');
    expect(during.headers.get('retry-after')).toBe('5');
    expect(healthCheck.status).toBe(503);
    expect(healthCheck.body.database).toMatchObject({ status: 'failed', message: 'database unreachable' });
    expect(restartedPid).not.toBe(killedPid);
    expect(isAlive(restartedPid)).toBe(true);
    expect((await api(base, '/xapi/v1/connectors', { token })).status).toBe(200);

    await sleep(1500);
    publishing = false;
    await Promise.all(loops);
    // Whatever is still in flight gets its PUBACK (or never will: then it does not count).
    await waitFor(async () => (acked.size === sent ? true : undefined), 15_000, { what: 'PUBACKs' }).catch(
      () => undefined,
    );
    await Promise.all(clients.map((c) => c.endAsync()));

    const sqlAfter = await openSql(dataDir, pgPort);
    try {
      // Every acknowledged message is in `packets` (duplicates allowed, losses not).
      const storedIds = async () => {
        const { rows } = await sqlAfter.query<{ id: string }>(
          `SELECT convert_from(payload, 'UTF8')::jsonb ->> 'id' AS id FROM packets WHERE connector_id = $1`,
          [connector.id],
        );
        return rows.map((r) => r.id);
      };
      const missing = async () => {
        const stored = new Set(await storedIds());
        return [...acked.keys()].filter((id) => !stored.has(id));
      };
      await waitFor(async () => ((await missing()).length === 0 ? true : undefined), 20_000, {
        intervalMs: 250,
        what: 'every acknowledged message in packets',
      }).catch(() => undefined);
      const lost = await missing();
      const rows = await storedIds();
      console.info(
        `database restart: outage ${upAt - killedAt} ms (/health 503 after ${downAt - killedAt} ms), ` +
          `sent ${sent}, acked ${acked.size} (${ackedBeforeKill} before the kill, ${ackedDuringOutage} during the outage), ` +
          `stored ${rows.length} rows, ${new Set(rows).size} distinct, lost ${lost.length}`,
      );
      expect(lost).toEqual([]);
      expect(ackedDuringOutage).toBeGreaterThan(0);

      // The pipeline's connections recovered too: every stored packet gets processed.
      await waitFor(
        async () => {
          const { rows: open } = await sqlAfter.query<{ n: string }>(
            `SELECT count(*) AS n FROM packets p WHERE connector_id = $1 AND ${PACKET_STATUS_SQL} IS NULL`,
            [connector.id],
          );
          return Number(open[0]!.n) === 0 ? true : undefined;
        },
        20_000,
        { intervalMs: 250, what: 'every stored packet processed' },
      );

      // Leader-only work took its session advisory locks again.
      await waitFor(
        async () => {
          const held = await advisoryLocks(sqlAfter);
          return [...locksBefore].every((key) => held.has(key)) ? true : undefined;
        },
        20_000,
        { intervalMs: 250, what: 'the leader locks held before the kill' },
      );
    } finally {
      await sqlAfter.end();
    }

    // A clean stop still stops the restarted PostgreSQL.
    const exit = await server.stop('SIGTERM');
    expect(exit.code).toBe(0);
    expect(isAlive(restartedPid)).toBe(false);
  }, 120_000);

  it('exits with code 1 when PostgreSQL may not be restarted, so the service manager takes over', async () => {
    const dataDir = await tempDataDir('stellwerk-db-giveup-');
    dirs.push(dataDir);
    const server = await startServer({
      STELLWERK_DATA_DIR: dataDir,
      STELLWERK_PG_PORT: '0',
      STELLWERK_PG_RESTART_ATTEMPTS: '0',
    });
    process.kill(await postmasterPid(dataDir), 'SIGKILL');
    const timeout = sleep(30_000).then(() => 'still running');
    const exit = await Promise.race([server.exited, timeout]);
    expect(exit).toEqual({ code: 1, signal: null });
    expect(server.output()).toContain('embedded PostgreSQL could not be kept running; giving up');
  }, 90_000);
});
