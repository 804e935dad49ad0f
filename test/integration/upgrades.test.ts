import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { verifyArchive } from '../../server/src/backup/archive.js';
import { restoreCommand } from '../../server/src/backup/backup.commands.js';
import { guardUpgrade, recordRunningVersion } from '../../server/src/backup/upgrade-guard.js';
import { loadConfig } from '../../server/src/config.js';
import { ENTITIES } from '../../server/src/entities.js';
import { newId } from '../../server/src/platform/crypto/ids.js';
import { knownMigrations } from '../../server/src/platform/db/migration-names.js';
import { openOrm } from '../../server/src/platform/db/orm.js';
import { VERSION } from '../../server/src/version.js';
import { withDatabase } from './global-setup.js';
import {
  killSpawnedServers,
  runFailingServer,
  serverEnv,
  startServer,
  tempDataDir,
} from './support/server-process.js';

/**
 * Upgrades on an external database (DATABASE_URL): a database one migration behind this build is
 * backed up before it is migrated, and the archive restores (and migrates) into an empty database;
 * a database a newer Stellwerk migrated is refused at start with both versions named.
 */

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  killSpawnedServers();
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

/** An empty database, migrated up to `to` when given. */
async function database(to?: string): Promise<string> {
  const adminUrl = inject('pgAdminUrl');
  const name = `stellwerk_upgrade_${newId().replace(/-/g, '')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  cleanups.push(async () => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  });
  const url = withDatabase(adminUrl, name);
  if (to) {
    const orm = await openOrm({ clientUrl: url, entities: ENTITIES, poolMax: 2 });
    await orm.getMigrator().up({ to });
    await orm.close();
  }
  return url;
}

async function dataDir(prefix: string): Promise<string> {
  const dir = await tempDataDir(prefix);
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

describe('upgrades', () => {
  it('backs up an older database before migrating it, and that archive restores and migrates', async () => {
    const known = knownMigrations();
    const previous = known.at(-2)!;
    const url = await database(previous);
    const dir = await dataDir('stellwerk-upgrade-');
    await fs.writeFile(path.join(dir, 'secret.key'), Buffer.alloc(32, 7).toString('base64'), { mode: 0o600 });
    await query(
      url,
      `INSERT INTO system_settings (key, value, updated_at) VALUES ('stellwerk_version', '"0.1.0"', now())`,
    );

    const server = await startServer({ DATABASE_URL: url, STELLWERK_DATA_DIR: dir });
    await server.stop('SIGTERM');
    const archives = await fs.readdir(path.join(dir, 'backups'));
    expect(archives).toEqual([
      expect.stringMatching(new RegExp(`^stellwerk-backup-\\d{8}T\\d{6}Z-before-${VERSION}\\.tar\\.gz$`)),
    ]);
    const archive = path.join(dir, 'backups', archives[0]!);
    const manifest = await verifyArchive(archive);
    expect(manifest.reason).toBe('before-upgrade');
    expect(manifest.database.lastMigration).toBe(previous);
    expect(manifest.database.migratedBy).toBe('0.1.0');
    const applied = await query<{ name: string }>(url, 'SELECT name FROM mikro_orm_migrations ORDER BY id');
    expect(applied.at(-1)?.name).toBe(known.at(-1));
    const version = await query<{ value: string }>(
      url,
      `SELECT value #>> '{}' AS value FROM system_settings WHERE key = 'stellwerk_version'`,
    );
    expect(version[0]?.value).toBe(VERSION);

    // The route for an external database: `stellwerk restore` into a new, empty one.
    const target = await database();
    const lines: string[] = [];
    const io = {
      out: (line: string) => lines.push(line),
      err: (line: string) => lines.push(line),
      env: serverEnv({
        DATABASE_URL: target,
        STELLWERK_DATA_DIR: await dataDir('stellwerk-upgrade-restore-'),
      }),
    };
    expect(await restoreCommand.run([archive], io)).toBe(0);
    expect(lines.join('\n')).toMatch(/migrated to this version: 1 migrations applied/);
    const restored = await query<{ name: string }>(
      target,
      'SELECT name FROM mikro_orm_migrations ORDER BY id',
    );
    expect(restored.map((row) => row.name)).toEqual(known);
    await expect(restoreCommand.run([archive], io)).rejects.toThrow(/already holds tables/);
  }, 90_000);

  it('refuses to start on a database a newer version migrated, naming both versions', async () => {
    const url = await database(knownMigrations().at(-1));
    await query(
      url,
      `INSERT INTO mikro_orm_migrations (name, executed_at) VALUES ('Migration29990101000000_future', now())`,
    );
    await query(
      url,
      `INSERT INTO system_settings (key, value, updated_at) VALUES ('stellwerk_version', '"9.9.9"', now())`,
    );
    const exit = await runFailingServer({
      DATABASE_URL: url,
      STELLWERK_DATA_DIR: await dataDir('stellwerk-newer-'),
    });
    expect(exit.code).toBe(1);
    expect(exit.output).toContain(`migrated by Stellwerk 9.9.9`);
    expect(exit.output).toContain(`this is Stellwerk ${VERSION}`);
    const applied = await query<{ name: string }>(url, 'SELECT name FROM mikro_orm_migrations ORDER BY id');
    expect(applied.at(-1)?.name).toBe('Migration29990101000000_future');
  }, 60_000);

  it('treats a recorded version alone as older or newer when the schema is the same', async () => {
    const url = await database(knownMigrations().at(-1));
    const dir = await dataDir('stellwerk-version-only-');
    await fs.writeFile(path.join(dir, 'secret.key'), Buffer.alloc(32, 9).toString('base64'), { mode: 0o600 });
    const config = loadConfig(serverEnv({ DATABASE_URL: url, STELLWERK_DATA_DIR: dir }));
    const log = pino({ level: 'silent' });
    const guard = () => guardUpgrade({ databaseUrl: url, embeddedDatabase: false, config, log });
    // Never recorded (a database this version created): nothing to back up.
    expect(await guard()).toEqual({});
    await query(
      url,
      `INSERT INTO system_settings (key, value, updated_at) VALUES ('stellwerk_version', '"0.1.9"', now())`,
    );
    const { backupFile } = await guard();
    expect(path.basename(backupFile!)).toMatch(new RegExp(`-before-${VERSION}\\.tar\\.gz$`));
    await recordRunningVersion(url);
    expect(await guard()).toEqual({});
    await query(url, `UPDATE system_settings SET value = '"99.0.0"' WHERE key = 'stellwerk_version'`);
    await expect(guard()).rejects.toThrow(`migrated by Stellwerk 99.0.0`);
  }, 30_000);
});
