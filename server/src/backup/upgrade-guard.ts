import path from 'node:path';
import pg from 'pg';
import type { Logger } from 'pino';
import type { BeforeMigrate } from '../cli/migrate.command.js';
import type { Config } from '../config.js';
import { knownMigrations, unknownMigrations } from '../platform/db/migration-names.js';
import { StartupError } from '../platform/db/startup-error.js';
import { VERSION } from '../version.js';
import { archiveName, beforeUpgradeSuffix } from './backup.manifest.js';
import { createBackup } from './backup.service.js';
import { readStoredVersion, recordVersion } from './schema-version.js';

/**
 * The start-up check before migrations (docs/operations.md, "Upgrades"), run under the migration
 * lock: a database migrated by a newer Stellwerk (a migration this build lacks, or a newer recorded
 * version) is refused, naming both versions; a database of an older one (migrations pending, or an
 * older recorded version) gets a backup archive (`…-before-<version>.tar.gz` in STELLWERK_BACKUP_DIR)
 * before this version touches it. A new, empty database needs neither.
 */
export async function guardUpgrade(options: {
  databaseUrl: string;
  embeddedDatabase: boolean;
  config: Config;
  log: Logger;
  known?: string[];
}): Promise<{ backupFile?: string }> {
  const { databaseUrl, config, log } = options;
  const known = options.known ?? knownMigrations();
  const applied = await appliedMigrations(databaseUrl);
  if (applied.length === 0) return {};
  const unknown = unknownMigrations(applied, known);
  const stored = await readStoredVersion(databaseUrl);
  if (unknown.length > 0 || (stored !== null && compareVersions(stored, VERSION) > 0)) {
    throw new StartupError(
      `the database was migrated by Stellwerk ${stored ?? 'of a newer version'} (schema ${applied.at(-1)}), and this is Stellwerk ${VERSION} (newest schema ${known.at(-1)}). An older version cannot run on a newer database: start Stellwerk ${stored ?? 'of the newer version'} again, or restore a backup made before the upgrade.`,
    );
  }
  const done = new Set(applied);
  const pending = known.filter((name) => !done.has(name));
  // A new version backs up before it touches the database, with or without migrations of its own.
  const upgrade = pending.length > 0 || (stored !== null && compareVersions(stored, VERSION) < 0);
  if (!upgrade) return {};
  const out = path.join(config.backupDir, archiveName(new Date(), beforeUpgradeSuffix(VERSION)));
  log.info(
    { from: stored ?? 'unknown', to: VERSION, pending: pending.length, file: out },
    'database of an older version: writing a backup before migrating',
  );
  const result = await createBackup(
    {
      databaseUrl,
      embeddedDatabase: options.embeddedDatabase,
      dataDir: config.dataDir,
      spoolDir: config.spoolDir,
      secretKey: config.secretKey,
    },
    { out, reason: 'before-upgrade' },
  );
  log.info(
    { file: result.file, bytes: result.bytes, durationMs: result.durationMs },
    'backup before upgrade written',
  );
  return { backupFile: result.file };
}

/** The same guard for `stellwerk migrate up`: a backup before an older database is migrated. */
export const guardUpgradeBeforeMigrating: BeforeMigrate = async (_pending, context) => {
  await guardUpgrade(context);
};

/** After migrating: the database remembers the newest version that ran on it. */
export async function recordRunningVersion(databaseUrl: string): Promise<void> {
  const stored = await readStoredVersion(databaseUrl);
  if (stored === null || compareVersions(stored, VERSION) < 0) await recordVersion(databaseUrl, VERSION);
}

/** Semantic-version order of `major.minor.patch` (a pre-release suffix is ignored). */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .split('-')[0]!
      .split('.')
      .map((n) => Number(n) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i += 1) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

async function appliedMigrations(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows: found } = await client.query<{ name: string | null }>(
      `SELECT to_regclass('mikro_orm_migrations')::text AS name`,
    );
    if (!found[0]?.name) return [];
    const { rows } = await client.query<{ name: string }>(
      'SELECT name FROM mikro_orm_migrations ORDER BY id',
    );
    return rows.map((row) => row.name);
  } finally {
    await client.end().catch(() => undefined);
  }
}
