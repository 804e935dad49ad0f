import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import pg from 'pg';
import type { Config } from '../config.js';
import { ENTITIES } from '../entities.js';
import { EmbeddedDatabase } from '../platform/db/embedded-postgres.js';
import { knownMigrations, unknownMigrations } from '../platform/db/migration-names.js';
import { migrateUp, openOrm } from '../platform/db/orm.js';
import { VERSION } from '../version.js';
import { ArchiveRejected, readArchive, verifyArchive } from './archive.js';
import { backupErrors, isAppError } from './backup.errors.js';
import { MANIFEST_MEMBER, SECRET_KEY_MEMBER, type BackupManifest } from './backup.manifest.js';
import { describe, keyFingerprint } from './backup.service.js';
import { DatabaseLoader } from './database-load.js';
import { EMBEDDED_DATABASE } from './database-source.js';
import { runningPostmaster } from '../platform/db/running-postmaster.js';
import { spoolFileOf } from './spool-copy.js';
import { compareVersions, recordRunningVersion } from './upgrade-guard.js';

export interface RestoreResult {
  manifest: BackupManifest;
  /** Migrations applied after loading: the archive came from an older version. */
  migrated: string[];
  durationMs: number;
}

/**
 * Restores an archive into the configured installation, which must be new: an empty or missing
 * data directory (embedded), or an empty database (DATABASE_URL). Order:
 * 1. the target is checked and the whole archive verified against its checksums, and its schema
 *    against this build's migrations: a refusal writes nothing;
 * 2. the migrations the archive lists are replayed, its tables loaded in one transaction, the
 *    secret key and spool files written;
 * 3. the migrations this build adds are applied (an archive of an older version is upgraded).
 * A failure in 2 or 3 removes what the restore wrote.
 */
export async function restoreBackup(file: string, config: Config, log: Logger): Promise<RestoreResult> {
  const started = performance.now();
  await checkTarget(config);
  let manifest: BackupManifest;
  try {
    manifest = await verifyArchive(file);
  } catch (error) {
    if (error instanceof ArchiveRejected) throw backupErrors.archiveRejected(file, error.message);
    throw backupErrors.archiveRejected(file, describe(error));
  }
  refuseNewerSchema(manifest);
  checkSecretKey(manifest, config);

  const created: string[] = [];
  let database: EmbeddedDatabase | undefined;
  try {
    let url: string;
    if (config.databaseUrl) url = config.databaseUrl;
    else {
      await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
      created.push(path.join(config.dataDir, 'postgres'), path.join(config.dataDir, 'postgres.password'));
      database = new EmbeddedDatabase({ dataDir: config.dataDir, port: 0, database: EMBEDDED_DATABASE, log });
      url = await database.start();
    }
    const orm = await openOrm({ clientUrl: url, entities: ENTITIES, log });
    let migrated: string[];
    try {
      await orm.getMigrator().up({ to: manifest.database.lastMigration });
      await loadArchive(file, manifest, url, config, created);
      migrated = await migrateUp(orm);
    } finally {
      await orm.close();
    }
    await recordRunningVersion(url);
    await database?.stop();
    return { manifest, migrated, durationMs: Math.round(performance.now() - started) };
  } catch (error) {
    await database?.stop().catch(() => undefined);
    for (const item of created.reverse())
      await rm(item, { recursive: true, force: true }).catch(() => undefined);
    if (isAppError(error)) throw error;
    throw backupErrors.restoreFailed(
      config.databaseUrl
        ? `${describe(error)}; the database of DATABASE_URL may hold the schema now: drop and recreate it before trying again`
        : describe(error),
    );
  }
}

/** The archive is newer than this build when it applied a migration this build lacks or a newer version migrated it. */
export function refuseNewerSchema(manifest: BackupManifest, known = knownMigrations()): void {
  const unknown = unknownMigrations(manifest.database.migrations, known);
  const madeBy = manifest.database.migratedBy ?? manifest.stellwerkVersion;
  // As at start (upgrade-guard.ts): a newer recorded version is refused even without new migrations.
  if (unknown.length === 0 && compareVersions(madeBy, VERSION) <= 0) return;
  throw backupErrors.schemaNewer(
    `The archive holds a database of Stellwerk ${madeBy} (schema ${manifest.database.lastMigration}); this is Stellwerk ${VERSION}, whose newest schema is ${known.at(-1) ?? 'none'}. Restore it with Stellwerk ${madeBy} or newer. Nothing was restored.`,
  );
}

function checkSecretKey(manifest: BackupManifest, config: Config): void {
  if (manifest.secretKey.source !== 'environment') return;
  if (!config.secretKey || keyFingerprint(config.secretKey) !== manifest.secretKey.fingerprint)
    throw backupErrors.archiveRejected(
      'the archive',
      'it was made with the key from STELLWERK_SECRET_KEY; set STELLWERK_SECRET_KEY to that same key for the restore and the server (its fingerprint is in the manifest)',
    );
}

async function checkTarget(config: Config): Promise<void> {
  if (config.databaseUrl) {
    const client = new pg.Client({ connectionString: config.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ count: string }>(
        `SELECT count(*)::text AS count FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p')`,
      );
      if (Number(rows[0]!.count) > 0)
        throw backupErrors.targetNotEmpty(
          'The database of DATABASE_URL already holds tables; restore into a new, empty database.',
        );
    } finally {
      await client.end().catch(() => undefined);
    }
  } else {
    if (await runningPostmaster(config.dataDir, { unreadable: 'throw' }))
      throw backupErrors.serverRunning(
        `A Stellwerk server is running on ${config.dataDir}; restore into a new data directory (STELLWERK_DATA_DIR).`,
      );
    const entries = await readdir(config.dataDir).catch(() => [] as string[]);
    if (entries.length > 0)
      throw backupErrors.targetNotEmpty(
        `${config.dataDir} (STELLWERK_DATA_DIR) is not empty; restore into a new or empty data directory.`,
      );
  }
  const spool = await readdir(config.spoolDir).catch(() => [] as string[]);
  if (spool.length > 0)
    throw backupErrors.targetNotEmpty(`${config.spoolDir} (STELLWERK_SPOOL_DIR) is not empty.`);
  if (!config.secretKey && existsSync(path.join(config.dataDir, 'secret.key')))
    throw backupErrors.targetNotEmpty(`${config.dataDir} already has a secret.key.`);
}

/** The member's bytes, passed on while hashed; throws at its end when they are not the verified ones. */
async function* checked(
  name: string,
  body: AsyncIterable<Buffer>,
  sha256: string | undefined,
): AsyncGenerator<Buffer> {
  const hash = createHash('sha256');
  for await (const piece of body) {
    hash.update(piece);
    yield piece;
  }
  if (hash.digest('hex') !== sha256) throw new Error(`member ${name} changed after it was verified`);
}

/** Second pass over the (verified) archive: tables into the database, files into the data directory. */
async function loadArchive(
  file: string,
  manifest: BackupManifest,
  url: string,
  config: Config,
  created: string[],
): Promise<void> {
  const loader = await DatabaseLoader.begin(url, manifest.database);
  let spoolFile: FileHandle | undefined;
  try {
    const expected = new Map(manifest.members.map((member) => [member.name, member.sha256]));
    for await (const archived of readArchive(file)) {
      if (archived.name === MANIFEST_MEMBER) continue;
      // Checked again while loading: the file could have changed since it was verified.
      const entry = {
        name: archived.name,
        body: checked(archived.name, archived.body, expected.get(archived.name)),
      };
      const table = loader.tableOf(entry.name);
      if (table) {
        for await (const piece of entry.body) await loader.write(table, piece);
        continue;
      }
      if (entry.name === SECRET_KEY_MEMBER) {
        const pieces: Buffer[] = [];
        for await (const piece of entry.body) pieces.push(piece);
        const target = path.join(config.dataDir, 'secret.key');
        await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
        created.push(target);
        await writeFile(target, Buffer.concat(pieces), { mode: 0o600, flag: 'wx' });
        continue;
      }
      const spoolName = spoolFileOf(entry.name);
      if (spoolName) {
        if (!created.includes(config.spoolDir)) {
          await mkdir(config.spoolDir, { recursive: true, mode: 0o700 });
          created.push(config.spoolDir);
        }
        spoolFile = await open(path.join(config.spoolDir, spoolName), 'wx', 0o600);
        for await (const piece of entry.body) await spoolFile.write(piece);
        await spoolFile.sync();
        await spoolFile.close();
        spoolFile = undefined;
        continue;
      }
      throw new Error(`member ${entry.name} belongs to no table or file`);
    }
    await loader.finish();
  } catch (error) {
    await spoolFile?.close().catch(() => undefined);
    await loader.abort();
    throw error;
  }
}
