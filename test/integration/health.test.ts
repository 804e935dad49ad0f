import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../server/src/app.js';
import { loadConfig } from '../../server/src/config.js';
import { ENTITIES } from '../../server/src/entities.js';
import type { HealthReport } from '../../server/src/health/health.service.js';
import { HeartbeatService } from '../../server/src/health/heartbeat.service.js';
import { newId } from '../../server/src/platform/crypto/ids.js';
import { SecretBox } from '../../server/src/platform/crypto/secret-box.js';
import { openOrm } from '../../server/src/platform/db/orm.js';
import { createTestDatabase } from './support/database.js';

import { createTestApp, json, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';

/** `/xapi/v1/health` and the heartbeat against a real PostgreSQL (process-level checks: process.test.ts). */
let t: TestApp;
let sql: pg.Client;

beforeAll(async () => {
  // A short interval is fine here; process.test.ts proves the acceptance criterion with the defaults.
  t = await createTestApp({
    env: { STELLWERK_HEARTBEAT_INTERVAL_MS: '100', STELLWERK_NODE_NAME: 'health-test' },
  });
  sql = new pg.Client({ connectionString: t.config.databaseUrl });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await t.close();
});

const clear = () => sql.query('DELETE FROM server_nodes');

/** A node row as another server would have left it, `silentSeconds` ago on the database clock. */
async function insertNode(
  name: string,
  silentSeconds: number,
  opts: { stopped?: boolean; hostname?: string } = {},
) {
  const id = newId();
  await sql.query(
    `INSERT INTO server_nodes (id, name, hostname, pid, version, started_at, last_heartbeat, stopped_at, details)
     VALUES ($1, $2, $3, 4242, '0.0.1', now() - interval '1 hour', now() - make_interval(secs => $4),
             CASE WHEN $5 THEN now() - make_interval(secs => $4) END, '{}')`,
    [id, name, opts.hostname ?? 'elsewhere', silentSeconds, opts.stopped ?? false],
  );
  return id;
}

async function health(): Promise<HealthReport> {
  const response = await t.app.inject({ url: '/xapi/v1/health' }); // public: no credentials
  expect(response.statusCode).toBe(200);
  return json<HealthReport>(response);
}

const byName = (report: HealthReport, name: string) => report.nodes.find((n) => n.name === name);

describe('GET /xapi/v1/health', () => {
  it('reports every stored node at once: ok, faulty after 10 s of silence, stopped', async () => {
    await clear();
    await insertNode('fresh', 3);
    await insertNode('silent', 30);
    await insertNode('gone', 60, { stopped: true });
    const report = await health();

    expect(report).toMatchObject({
      status: 'degraded',
      checkedBy: t.ctx.nodeId,
      version: (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version,
      database: { status: 'ok' },
    });
    expect(Date.parse(report.checkedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(byName(report, 'fresh')).toMatchObject({
      status: 'ok',
      pid: 4242,
      hostname: 'elsewhere',
      version: '0.0.1',
      stoppedAt: null,
    });
    expect(byName(report, 'silent')?.status).toBe('faulty');
    expect(byName(report, 'silent')!.silentForMs).toBeGreaterThanOrEqual(30_000);
    expect(byName(report, 'silent')!.silentForMs).toBeLessThan(40_000);
    expect(byName(report, 'gone')).toMatchObject({
      status: 'stopped',
      stoppedAt: expect.any(String) as string,
    });
    expect(Object.keys(byName(report, 'fresh')!).sort()).toEqual([
      'hostname',
      'id',
      'lastHeartbeat',
      'name',
      'pid',
      'silentForMs',
      'startedAt',
      'status',
      'stoppedAt',
      'version',
    ]);

    // Stopped nodes do not degrade the cluster; only faulty ones do.
    await sql.query(`DELETE FROM server_nodes WHERE name = 'silent'`);
    expect((await health()).status).toBe('ok');
  });

  it('is answered 503 with the database marked failed when the query fails, without details', async () => {
    const db = await createTestDatabase();
    const orm = await openOrm({ clientUrl: db.url, entities: ENTITIES, poolMax: 2 });
    const config = loadConfig({
      DATABASE_URL: db.url,
      STELLWERK_DATA_DIR: path.join(os.tmpdir(), 'unused'),
      STELLWERK_LOG_LEVEL: 'silent',
    });
    const { app } = await buildServer({
      config,
      orm,
      secretBox: new SecretBox(randomBytes(32)),
      logger: false,
    });
    try {
      await db.drop(); // the database disappears under a running server
      const response = await app.inject({ url: '/xapi/v1/health' });
      expect(response.statusCode).toBe(503);
      expect(json(response)).toMatchObject({
        status: 'degraded',
        database: { status: 'failed', message: 'database query failed' },
        nodes: [],
      });
      expect(response.body).not.toContain(new URL(db.url).password);
      // Metrics still answer: the node gauge is left out rather than failing the scrape.
      const metrics = await app.inject({ url: '/metrics' });
      expect(metrics.statusCode).toBe(200);
      expect(metrics.body).toContain('stellwerk_process_resident_memory_bytes');
      expect(metrics.body).not.toMatch(/^stellwerk_nodes\{/m);
    } finally {
      await app.close();
      await orm.close();
    }
  });
});

describe('heartbeat', () => {
  it('writes its row at start, beats on the interval without overlapping writes, and records stopped_at', async () => {
    await clear();
    const heartbeat = t.services.heartbeat;
    await heartbeat.start();
    try {
      const first = byName(await health(), 'health-test');
      expect(first).toMatchObject({
        id: t.ctx.nodeId,
        status: 'ok',
        pid: process.pid,
        hostname: os.hostname(),
        stoppedAt: null,
      });
      // The timer alone never keeps the process alive.
      expect((heartbeat as unknown as { timer: NodeJS.Timeout }).timer.hasRef()).toBe(false);

      await waitFor(
        async () => {
          const later = byName(await health(), 'health-test')!;
          return later.lastHeartbeat > first!.lastHeartbeat ? later : undefined;
        },
        5_000,
        { intervalMs: 50 },
      );

      // Hold the row: the running beat blocks, and no second beat may pile up behind it.
      const locker = new pg.Client({ connectionString: t.config.databaseUrl });
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM server_nodes WHERE id = $1 FOR UPDATE', [t.ctx.nodeId]);
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // ten intervals
      const { rows } = await sql.query<{ waiting: number }>(
        `SELECT count(*)::int AS waiting FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
            AND query LIKE '%INSERT INTO server_nodes%'`,
      );
      await locker.query('COMMIT');
      await locker.end();
      expect(rows[0]!.waiting).toBe(1);
    } finally {
      await heartbeat.stop();
    }
    const stopped = byName(await health(), 'health-test');
    expect(stopped).toMatchObject({ status: 'stopped', stoppedAt: expect.any(String) as string });
    const { rows } = await sql.query<{ beats: string }>(
      'SELECT last_heartbeat::text AS beats FROM server_nodes WHERE id = $1',
      [t.ctx.nodeId],
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = await sql.query<{ beats: string }>(
      'SELECT last_heartbeat::text AS beats FROM server_nodes WHERE id = $1',
      [t.ctx.nodeId],
    );
    expect(after.rows[0]!.beats).toBe(rows[0]!.beats); // no beat after stop
  });

  it('at start retires silent nodes of its own host as crashed and prunes nodes gone for a day', async () => {
    await clear();
    const crashedHere = await insertNode('crashed-here', 60, { hostname: os.hostname() });
    const aliveHere = await insertNode('alive-here', 2, { hostname: os.hostname() });
    await insertNode('crashed-elsewhere', 60);
    await insertNode('stopped-long-ago', 2 * 86_400, { stopped: true });
    await insertNode('silent-long-ago', 2 * 86_400);

    const heartbeat = new HeartbeatService({
      orm: t.orm,
      log: t.app.log,
      nodeId: newId(),
      nodeName: 'newcomer',
      intervalMs: 10_000,
      faultyAfterMs: 10_000,
    });
    await heartbeat.start();
    await heartbeat.stop();

    const report = await health();
    expect(report.nodes.map((n) => n.name).sort()).toEqual([
      'alive-here',
      'crashed-elsewhere',
      'crashed-here',
      'newcomer',
    ]);
    expect(byName(report, 'crashed-here')?.status).toBe('stopped');
    expect(byName(report, 'alive-here')?.status).toBe('ok');
    expect(byName(report, 'crashed-elsewhere')?.status).toBe('faulty');
    const { rows } = await sql.query<{ id: string; details: Record<string, unknown> }>(
      'SELECT id, details FROM server_nodes WHERE id = ANY($1)',
      [[crashedHere, aliveHere]],
    );
    expect(rows.find((r) => r.id === crashedHere)?.details).toEqual({ endedBy: 'crash' });
    expect(rows.find((r) => r.id === aliveHere)?.details).toEqual({});
  });
});
