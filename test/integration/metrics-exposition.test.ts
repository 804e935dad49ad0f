import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import mqtt from 'mqtt';
import { afterAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../server/src/version.js';
import { createTestDatabase } from './support/database.js';
import { killSpawnedServers, REPO_ROOT, startServer, tempDataDir } from './support/server-process.js';
import { waitFor } from './support/wait.js';
import { freePort } from './support/mosquitto.js';

/**
 * `/metrics` of a real server process that has ingested MQTT messages: Prometheus' own checker
 * accepts it, every family appears once (the ingest worker thread's registry merged into the main
 * one), the operator's families are there, and docs/operations.md documents exactly these families.
 */

const ADMIN = { email: 'metrics@stellwerk.test', password: 'metrics exposition password' };
const TOKEN = 'scrape-token-0123456789';
const MESSAGES = 20;

let db: { url: string; drop: () => Promise<void> } | undefined;
afterAll(async () => {
  killSpawnedServers();
  await db?.drop();
});

async function post<T>(base: string, route: string, body: unknown, token?: string): Promise<T> {
  const response = await fetch(`${base}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${route}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** `promtool check metrics` on `text` (stdin): its exit code and everything it printed. */
function promtool(text: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = execFile('promtool', ['check', 'metrics'], (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
    child.stdin!.end(text);
  });
}

/** Value of the one sample `name{labels…}` (labels matched as a subset), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const has = Object.entries(labels).every(([key, value]) => match[2]?.includes(`${key}="${value}"`));
    if (has) return Number(match[3]);
  }
  return undefined;
}

/** Metric names in the first column of docs/operations.md's metrics table (`name{labels}` or `a_*`). */
async function documentedFamilies(): Promise<string[]> {
  const doc = await readFile(path.join(REPO_ROOT, 'docs/operations.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Metrics'), doc.indexOf('\n## ', doc.indexOf('## Metrics') + 1));
  const names: string[] = [];
  for (const row of section.split('\n').filter((line) => line.startsWith('| `'))) {
    const firstCell = row.split('|')[1]!;
    for (const [, name] of firstCell.matchAll(/`(stellwerk_[\w*]+)/g)) names.push(name!);
  }
  return names;
}

describe('the /metrics exposition of a server that ingests', () => {
  it('passes promtool with each family once, and every family is documented', async () => {
    db = await createTestDatabase();
    const mqttPort = await freePort();
    const server = await startServer({
      DATABASE_URL: db.url,
      STELLWERK_DATA_DIR: await tempDataDir('stellwerk-metrics-'),
      STELLWERK_MQTT_PORT: String(mqttPort),
      STELLWERK_ADMIN_EMAIL: ADMIN.email,
      STELLWERK_ADMIN_PASSWORD: ADMIN.password,
      STELLWERK_METRICS_TOKEN: TOKEN,
    });
    const base = server.baseUrl;
    const { token } = await post<{ token: string }>(base, '/xapi/v1/auth/login', ADMIN);
    const connector = await post<{ id: string; credentials: { username: string; password: string } }>(
      base,
      '/xapi/v1/connectors',
      { title: 'metrics', type: 'mqtt-broker' },
      token,
    );
    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${mqttPort}`, {
      username: connector.credentials.username,
      password: connector.credentials.password,
      reconnectPeriod: 0,
    });
    for (let seq = 0; seq < MESSAGES; seq++) {
      await client.publishAsync(`connectors/${connector.id}/devices/meter-1/up`, JSON.stringify({ seq }), {
        qos: 1,
      });
    }
    await client.endAsync();

    const scrape = async (authorization?: string) =>
      fetch(`${base}/metrics`, authorization ? { headers: { authorization } } : {});
    expect((await scrape()).status).toBe(401);
    expect((await scrape('Bearer not-the-scrape-token')).status).toBe(401);
    expect((await scrape(`Bearer ${token}`)).status).toBe(401);
    // The pipeline commits in the worker thread: wait until its counter, merged in, shows them all.
    const text = await waitFor(
      async () => {
        const body = await (await scrape(`Bearer ${TOKEN}`)).text();
        return (sample(body, 'stellwerk_ingest_packets_total') ?? 0) >= MESSAGES ? body : undefined;
      },
      20_000,
      { intervalMs: 200, what: 'the ingested packets in /metrics' },
    );

    const checked = await promtool(text);
    expect(checked.output).toBe('');
    expect(checked.code).toBe(0);

    // One HELP and one TYPE line per family, though both threads register some of them.
    const helps = [...text.matchAll(/^# HELP (\S+)/gm)].map((match) => match[1]!);
    const types = [...text.matchAll(/^# TYPE (\S+)/gm)].map((match) => match[1]!);
    expect(helps.length).toBe(new Set(helps).size);
    expect(types).toEqual(helps);

    // The operator's families, from both threads.
    expect(sample(text, 'stellwerk_build_info', { version: VERSION })).toBe(1);
    for (const pool of ['orm', 'ingest-pipeline', 'ingest-packets', 'timeseries']) {
      expect(sample(text, 'stellwerk_database_pool_waiting', { pool }), pool).toBe(0);
      expect(
        sample(text, 'stellwerk_database_pool_connections', { pool, state: 'in_use' }),
        pool,
      ).toBeGreaterThanOrEqual(0);
    }
    expect(sample(text, 'stellwerk_broker_messages_total', { direction: 'in' })).toBe(MESSAGES);
    expect(sample(text, 'stellwerk_broker_clients')).toBe(0);
    expect(sample(text, 'stellwerk_jobs', { status: 'queued' })).toBe(0);
    expect(sample(text, 'stellwerk_packet_spool_bytes')).toBeGreaterThan(MESSAGES * 10);
    expect(sample(text, 'stellwerk_disk_free_bytes', { dir: 'data' })).toBeGreaterThan(0);
    expect(sample(text, 'stellwerk_disk_free_bytes', { dir: 'spool' })).toBeGreaterThan(0);

    // docs/operations.md: a row for every family, and no row for a family that does not exist.
    const documented = await documentedFamilies();
    const matches = (name: string, family: string) =>
      name.endsWith('*') ? family.startsWith(name.slice(0, -1)) : family === name;
    expect(helps.filter((family) => !documented.some((name) => matches(name, family)))).toEqual([]);
    expect(documented.filter((name) => !helps.some((family) => matches(name, family)))).toEqual([]);

    await server.stop();
  });
});
