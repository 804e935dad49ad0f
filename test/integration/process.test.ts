import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealthReport } from '../../server/src/health/health.service.js';
import { createTestDatabase } from './support/database.js';
import {
  isAlive,
  killSpawnedServers,
  portClosed,
  processesMentioning,
  startServer,
  tempDataDir,
  type ServerProcess,
} from './support/server-process.js';
import { waitFor } from './support/wait.js';

/**
 * Real server processes (node + tsx on the sources) with the default heartbeat settings
 * (10 s interval, faulty after 10 s), and the graceful shutdown.
 */
let db: { url: string; drop: () => Promise<void> };
const dirs: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  killSpawnedServers();
  await db.drop();
  await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

async function health(server: ServerProcess): Promise<HealthReport> {
  const response = await fetch(`${server.baseUrl}/xapi/v1/health`);
  expect(response.status).toBe(200);
  return (await response.json()) as HealthReport;
}

// Several real processes share two CPUs with the other test files: generous, but bounded.
const PROCESS_TEST_TIMEOUT_MS = 120_000;

const byName = (report: HealthReport, name: string) => report.nodes.find((n) => n.name === name);

describe('server processes', () => {
  it.concurrent(
    'two nodes on one database both report ok; a SIGKILLed node is faulty within 20 s; SIGTERM stops gracefully',
    async () => {
      const dataDir = await tempDataDir('stellwerk-nodes-');
      dirs.push(dataDir);
      // Every node of one database shares the secret key; heartbeat settings stay at their defaults.
      const secretKey = randomBytes(32).toString('base64');
      const env = (name: string) => ({
        DATABASE_URL: db.url,
        STELLWERK_DATA_DIR: dataDir,
        // A packet spool belongs to one server (its LOCK refuses a second): one per node.
        STELLWERK_SPOOL_DIR: path.join(dataDir, `spool-${name}`),
        STELLWERK_SECRET_KEY: secretKey,
        STELLWERK_NODE_NAME: name,
      });
      const [a, b] = await Promise.all([startServer(env('node-a')), startServer(env('node-b'))]);

      for (const server of [a, b]) {
        const report = await health(server);
        expect(report.status).toBe('ok');
        expect(report.database.status).toBe('ok');
        expect(byName(report, 'node-a')).toMatchObject({ status: 'ok', pid: a.pid, stoppedAt: null });
        expect(byName(report, 'node-b')).toMatchObject({ status: 'ok', pid: b.pid, stoppedAt: null });
      }

      expect(await b.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
      const killedAt = Date.now();
      const degraded = await waitFor(async () => {
        const report = await health(a);
        return byName(report, 'node-b')?.status === 'faulty' ? report : undefined;
      }, 20_000);
      expect(Date.now() - killedAt).toBeLessThan(20_000);
      expect(degraded.status).toBe('degraded');
      expect(byName(degraded, 'node-a')?.status).toBe('ok');
      expect(byName(degraded, 'node-b')!.silentForMs).toBeGreaterThan(10_000);

      expect(await a.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      expect(await portClosed(a.httpPort)).toBe(true);
      expect(a.output()).not.toContain('failed to stop cleanly');
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      const { rows } = await client.query<{ name: string; stopped: boolean }>(
        'SELECT name, stopped_at IS NOT NULL AS stopped FROM server_nodes ORDER BY name',
      );
      await client.end();
      // The graceful stop wrote stopped_at; the SIGKILLed node could not.
      expect(rows).toEqual([
        { name: 'node-a', stopped: true },
        { name: 'node-b', stopped: false },
      ]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it.concurrent(
    'SIGTERM with the embedded PostgreSQL exits 0, closes the port and stops postgres; so does Ctrl-C, quietly',
    async () => {
      const dataDir = await tempDataDir('stellwerk-embedded-');
      dirs.push(dataDir);
      const server = await startServer({
        STELLWERK_DATA_DIR: dataDir,
        STELLWERK_PG_PORT: '0',
        STELLWERK_NODE_NAME: 'solo',
      });
      const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
      const postmaster = Number((await fs.readFile(pidFile, 'utf8')).split('\n')[0]);
      expect(isAlive(postmaster)).toBe(true);
      expect(byName(await health(server), 'solo')).toMatchObject({ status: 'ok', pid: server.pid });
      // The first start's onboarding link names the port the server picked (STELLWERK_HTTP_PORT=0).
      expect(server.output()).toContain(
        `"onboarding":"http://localhost:${server.httpPort}/onboarding?token=`,
      );

      expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      expect(await portClosed(server.httpPort)).toBe(true);
      expect(isAlive(postmaster)).toBe(false);
      await expect(fs.access(pidFile)).rejects.toThrow(); // removed by a clean PostgreSQL shutdown
      expect(await processesMentioning(dataDir)).toEqual([]);
      const output = server.output();
      expect(output).toContain('"part":"heartbeat","msg":"stopped"');
      expect(output).toContain('"part":"database","msg":"stopped"');
      expect(output).not.toContain('failed to stop cleanly');

      // Started again on the same data directory: the first run's clean stop is on record.
      const again = await startServer({
        STELLWERK_DATA_DIR: dataDir,
        STELLWERK_PG_PORT: '0',
        STELLWERK_NODE_NAME: 'solo-again',
      });
      const report = await health(again);
      expect(byName(report, 'solo')).toMatchObject({
        status: 'stopped',
        stoppedAt: expect.any(String) as string,
      });
      expect(byName(report, 'solo-again')?.status).toBe('ok');
      expect(report.status).toBe('ok');
      // Ctrl-C in a terminal signals the whole process group: PostgreSQL stops at the same moment as
      // the server, which then reports its stop without an error line and without console noise.
      const againPostmaster = Number((await fs.readFile(pidFile, 'utf8')).split('\n')[0]);
      const stopping = again.stop('SIGINT');
      process.kill(againPostmaster, 'SIGINT');
      expect(await stopping).toEqual({ code: 0, signal: null });
      expect(await processesMentioning(dataDir)).toEqual([]);
      const stopped = again.output().slice(again.output().indexOf('"msg":"shutting down"'));
      expect(stopped).toContain('"part":"database","msg":"stopped"');
      expect(stopped.split('\n').filter((line) => line.includes('"level":50'))).toEqual([]);
      expect(stopped).not.toContain('Connection Error');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
