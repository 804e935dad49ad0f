import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import mqtt from 'mqtt';
import pg from 'pg';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../server/src/auth/totp.js';
import { ArchiveWriter, readArchive, verifyArchive } from '../../server/src/backup/archive.js';
import { backupCommand, restoreCommand } from '../../server/src/backup/backup.commands.js';
import { MANIFEST_MEMBER } from '../../server/src/backup/backup.manifest.js';
import { openCommandDatabase } from '../../server/src/backup/database-source.js';
import type { CliIo } from '../../server/src/cli/command.js';
import { loadConfig } from '../../server/src/config.js';
import { VERSION } from '../../server/src/version.js';
import {
  killSpawnedServers,
  serverEnv,
  sleep,
  startServer,
  tempDataDir,
  type ServerProcess,
} from './support/server-process.js';
import { waitFor } from './support/wait.js';
import { freePort } from './support/mosquitto.js';

/**
 * Backup under load: QoS 1 messages flow into a server on the embedded database while
 * `stellwerk backup` runs beside it; the archive is restored into a new data directory and served
 * by a second server on other ports. Damaged and newer-schema archives are refused unwritten.
 */

const ADMIN = { email: 'backup@stellwerk.test', password: 'backup test password long' };
const servers: ServerProcess[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGTERM')));
  killSpawnedServers();
  await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

async function api<T>(base: string, route: string, init: { token?: string; body?: unknown } = {}) {
  const response = await fetch(`${base}${route}`, {
    method: init.body === undefined ? 'GET' : 'POST',
    headers: {
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return { status: response.status, body: (await response.json()) as T };
}

async function newDir(prefix: string): Promise<string> {
  const dir = await tempDataDir(prefix);
  dirs.push(dir);
  return dir;
}

function cli(dataDir: string): CliIo & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    out: (line) => lines.push(line),
    err: (line) => lines.push(line),
    env: serverEnv({ STELLWERK_DATA_DIR: dataDir }),
  };
}

/** The archive with one member's bytes changed: valid gzip and tar, but its checksum no longer matches. */
async function tampered(file: string, out: string): Promise<void> {
  const tar = gunzipSync(await fs.readFile(file));
  // The first member (secret.key) starts after its 512-byte header.
  tar[512] = tar[512] === 0x41 ? 0x42 : 0x41;
  await fs.writeFile(out, gzipSync(tar));
}

/** The archive re-written with a manifest claiming a migration this build does not have. */
async function fromNewerVersion(file: string, out: string): Promise<void> {
  const manifest = await verifyArchive(file);
  const writer = ArchiveWriter.create(out);
  for await (const entry of readArchive(file))
    if (entry.name !== MANIFEST_MEMBER) await writer.addStream(entry.name, entry.size, entry.body);
  const future = 'Migration29990101000000_from_the_future';
  await writer.finish({
    ...manifest,
    stellwerkVersion: '9.9.9',
    database: {
      ...manifest.database,
      migrations: [...manifest.database.migrations, future],
      lastMigration: future,
      migratedBy: '9.9.9',
    },
  });
}

describe('backup and restore', () => {
  it('backs up a server under QoS 1 load and restores every acknowledged message, users and 2FA', async () => {
    const sourceDir = await newDir('stellwerk-backup-source-');
    const mqttPort = await freePort();
    const source = await startServer({
      STELLWERK_DATA_DIR: sourceDir,
      STELLWERK_PG_PORT: '0',
      STELLWERK_MQTT_PORT: String(mqttPort),
      STELLWERK_ADMIN_EMAIL: ADMIN.email,
      STELLWERK_ADMIN_PASSWORD: ADMIN.password,
    });
    servers.push(source);
    const { body: session } = await api<{ token: string }>(source.baseUrl, '/xapi/v1/auth/login', {
      body: ADMIN,
    });
    const { body: enrolment } = await api<{ secret: string }>(source.baseUrl, '/xapi/v1/users/me/2fa', {
      token: session.token,
      body: {},
    });
    const activated = await api(source.baseUrl, '/xapi/v1/users/me/2fa/activate', {
      token: session.token,
      body: { otp: await totpCode(enrolment.secret, new Date()) },
    });
    expect(activated.status).toBe(200);
    const { body: connector } = await api<{
      id: string;
      credentials: { username: string; password: string };
    }>(source.baseUrl, '/xapi/v1/connectors', {
      token: session.token,
      body: { title: 'backup', type: 'mqtt-broker' },
    });

    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${mqttPort}`, {
      username: connector.credentials.username,
      password: connector.credentials.password,
      reconnectPeriod: 0,
    });
    const ackedAt = new Map<number, number>();
    let publishing = true;
    const publisher = (async () => {
      for (let seq = 0; publishing;) {
        for (let i = 0; i < 10; i += 1, seq += 1) {
          const sent = seq;
          client.publish(
            `connectors/${connector.id}/devices/gw-1/up`,
            JSON.stringify({ seq: sent }),
            { qos: 1 },
            (e) => {
              if (!e) ackedAt.set(sent, Date.now());
            },
          );
        }
        await sleep(20);
      }
    })();

    await waitFor(async () => (ackedAt.size >= 200 ? true : undefined), 15_000, {
      what: 'first acknowledgements',
    });
    const archive = path.join(await newDir('stellwerk-backup-out-'), 'under-load.tar.gz');
    const backupIo = cli(sourceDir);
    expect(await backupCommand.run(['--out', archive], backupIo)).toBe(0);
    const ackedDuringBackup = ackedAt.size;
    await sleep(300);
    publishing = false;
    await publisher;
    await client.endAsync();

    const manifest = await verifyArchive(archive);
    const consistentAt = Date.parse(manifest.consistentPoint.at);
    const required = [...ackedAt].filter(([, at]) => at < consistentAt).map(([seq]) => seq);
    expect(manifest.stellwerkVersion).toBe(VERSION);
    expect(manifest.database.lastMigration).toMatch(/^Migration\d+/);
    expect(required.length).toBeGreaterThan(100);
    // Load kept flowing across the backup: some messages were acknowledged after its consistent point.
    expect(ackedAt.size).toBeGreaterThan(required.length);

    // A damaged archive and one of a newer schema are refused; their target stays empty.
    const refusedDir = await newDir('stellwerk-restore-refused-');
    const damaged = `${archive}.damaged.tar.gz`;
    await tampered(archive, damaged);
    await expect(restoreCommand.run([damaged], cli(refusedDir))).rejects.toThrow(
      /does not match its checksum/,
    );
    const newer = `${archive}.newer.tar.gz`;
    await fromNewerVersion(archive, newer);
    await expect(restoreCommand.run([newer], cli(refusedDir))).rejects.toThrow(
      new RegExp(`Stellwerk 9\\.9\\.9 .*this is Stellwerk ${VERSION.replaceAll('.', '\\.')}`),
    );
    expect(await fs.readdir(refusedDir)).toEqual([]);
    await expect(restoreCommand.run([archive], cli(sourceDir))).rejects.toThrow(/server is running/);

    const targetDir = await newDir('stellwerk-restore-target-');
    const restoreIo = cli(targetDir);
    expect(await restoreCommand.run([archive], restoreIo)).toBe(0);
    expect(existsSync(path.join(targetDir, 'secret.key'))).toBe(true);
    await expect(restoreCommand.run([archive], cli(targetDir))).rejects.toThrow(/not empty/);

    const restored = await startServer({ STELLWERK_DATA_DIR: targetDir, STELLWERK_PG_PORT: '0' });
    servers.push(restored);
    expect(restored.httpPort).not.toBe(source.httpPort);
    // The code of the next 30-second step: the current one was spent on activation.
    const otp = await totpCode(enrolment.secret, new Date(Date.now() + 30_000));
    const login = await api<{ token?: string }>(restored.baseUrl, '/xapi/v1/auth/login', {
      body: { ...ADMIN, otp },
    });
    expect(login.status).toBe(200);

    const database = await openCommandDatabase(
      loadConfig(serverEnv({ STELLWERK_DATA_DIR: targetDir })),
      pino({ level: 'silent' }),
    );
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      const missing = await waitFor(
        async () => {
          const { rows } = await db.query<{ seq: number }>(
            `SELECT DISTINCT (convert_from(payload, 'UTF8')::jsonb ->> 'seq')::int AS seq FROM packets WHERE connector_id = $1`,
            [connector.id],
          );
          const stored = new Set(rows.map((row) => row.seq));
          const lost = required.filter((seq) => !stored.has(seq));
          return lost.length === 0 ? lost : undefined;
        },
        20_000,
        {
          what: 'every message acknowledged before the consistent point in the restored database',
          intervalMs: 250,
        },
      );
      expect(missing).toEqual([]);
      console.info(
        `backup under load: ${ackedAt.size} acknowledged (${ackedDuringBackup} when the backup returned), ` +
          `${required.length} before the consistent point, all restored; ${backupIo.lines[1]?.trim()}`,
      );
    } finally {
      await db.end();
      await database.close();
    }

    // With the server stopped, the command starts the embedded PostgreSQL for itself.
    await source.stop('SIGTERM');
    const offline = path.join(path.dirname(archive), 'offline.tar.gz');
    expect(await backupCommand.run(['--out', offline], cli(sourceDir))).toBe(0);
    const offlineManifest = await verifyArchive(offline);
    expect(
      offlineManifest.database.tables.find((table) => table.name === 'packets')!.rows,
    ).toBeGreaterThanOrEqual(ackedAt.size);
  }, 120_000);
});
