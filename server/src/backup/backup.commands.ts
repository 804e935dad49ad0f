import { stat } from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { loadConfig, type Config } from '../config.js';
import { AppError } from '../platform/errors.js';
import { CliError, type CliCommand, type CliIo } from '../cli/command.js';
import { archiveName } from './backup.manifest.js';
import { createBackup, describe } from './backup.service.js';
import { openCommandDatabase } from './database-source.js';
import { restoreBackup } from './restore.service.js';

/** `stellwerk backup` and `stellwerk restore` (docs/operations.md, "Backup and restore"). */

const BACKUP_USAGE = `Usage: stellwerk backup [--out FILE]

Writes one archive (gzip-compressed tar, mode 600) with a consistent snapshot of the database, the
secret key and the packet spool, and a manifest with the version, last migration, creation time and a
SHA-256 of every member. Works while the server runs and ingests: it reads the embedded database the
running server started (or DATABASE_URL), with no PostgreSQL client tools.

Options:
  --out FILE   where to write the archive (default: STELLWERK_BACKUP_DIR/stellwerk-backup-<UTC time>.tar.gz)
  --help       this text

Run it as the user the server runs as (it reads the data directory).`;

const RESTORE_USAGE = `Usage: stellwerk restore FILE

Restores an archive of \`stellwerk backup\` into a new installation: STELLWERK_DATA_DIR must be empty or
missing (or, with DATABASE_URL, the database must hold no tables), and no server may run on it.
The archive's checksums are verified before anything is written. An archive of a newer Stellwerk is
refused; one of an older Stellwerk is restored and then migrated to this version.

Options:
  --help       this text`;

export const backupCommand: CliCommand = {
  name: 'backup',
  summary: 'Write a backup archive (works while the server runs)',
  usage: BACKUP_USAGE,
  async run(args, io) {
    const { out } = parseBackupArgs(args);
    const config = configOf(io);
    const log = quietLog();
    // Into the server's own backup directory only as its owner: root-owned archives there would block pruning.
    if (!out) await refuseRootOnForeignDataDir(config.dataDir, 'backup');
    const target = out ? path.resolve(out) : path.join(config.backupDir, archiveName(new Date()));
    const database = await openCommandDatabase(config, log).catch((error: unknown) => {
      throw new CliError(`Cannot reach the database: ${describe(error)}`);
    });
    try {
      const result = await createBackup(
        {
          databaseUrl: database.url,
          embeddedDatabase: database.embedded,
          dataDir: config.dataDir,
          spoolDir: config.spoolDir,
          secretKey: config.secretKey,
        },
        { out: target, reason: 'manual' },
      );
      const { consistentPoint, database: dump } = result.manifest;
      io.out(`Backup written: ${result.file}`);
      io.out(
        `  ${formatBytes(result.bytes)} in ${(result.durationMs / 1000).toFixed(1)} s; schema ${dump.lastMigration}; ${dump.tables.length} tables, ${consistentPoint.spoolLastSeq} spooled packets`,
      );
      io.out(
        `  consistent point ${consistentPoint.at}: every message acknowledged before it is in the archive`,
      );
      return 0;
    } catch (error) {
      throw asCliError(error);
    } finally {
      await database.close().catch(() => undefined);
    }
  },
};

export const restoreCommand: CliCommand = {
  name: 'restore',
  summary: 'Restore a backup archive into a new data directory',
  usage: RESTORE_USAGE,
  async run(args, io) {
    const files = args.filter((arg) => !arg.startsWith('-'));
    const unknown = args.find((arg) => arg.startsWith('-'));
    if (unknown) throw new CliError(`Unknown option ${unknown}; see stellwerk restore --help`, 2);
    if (files.length !== 1) throw new CliError('stellwerk restore needs exactly one archive FILE', 2);
    const config = configOf(io);
    await refuseRootOnForeignDataDir(config.dataDir, 'restore');
    const file = path.resolve(files[0]!);
    io.out(`Verifying ${file} …`);
    try {
      const result = await restoreBackup(file, config, quietLog());
      const { manifest } = result;
      io.out(
        `Restored the backup of ${manifest.createdAt} (Stellwerk ${manifest.stellwerkVersion}, schema ${manifest.database.lastMigration}) into ${config.databaseUrl ? 'the database of DATABASE_URL' : config.dataDir}.`,
      );
      if (result.migrated.length > 0)
        io.out(`  migrated to this version: ${result.migrated.length} migrations applied`);
      io.out(`  ${(result.durationMs / 1000).toFixed(1)} s. Start the server on it: stellwerk start`);
      return 0;
    } catch (error) {
      throw asCliError(error);
    }
  },
};

export function parseBackupArgs(args: string[]): { out: string | undefined } {
  let out: string | undefined;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (arg === '--out' || arg === '-o') {
      out = args[i + 1];
      if (!out) throw new CliError('--out needs a FILE', 2);
      i += 1;
    } else if (arg.startsWith('--out=')) out = arg.slice('--out='.length);
    else throw new CliError(`Unknown argument ${arg}; see stellwerk backup --help`, 2);
  }
  return { out };
}

/**
 * As root, restored files and archives would belong to root, and the server, running as the data
 * directory's owner, could not read (or prune) them.
 */
async function refuseRootOnForeignDataDir(dataDir: string, command: string): Promise<void> {
  if (process.getuid?.() !== 0) return;
  const owner = await stat(dataDir).then(
    (found) => found.uid,
    () => 0,
  );
  if (owner !== 0)
    throw new CliError(
      `${dataDir} belongs to user id ${owner}: run it as that user, as the server runs (sudo -u <user> stellwerk ${command} …)`,
    );
}

function configOf(io: CliIo): Config {
  try {
    return loadConfig(io.env);
  } catch (error) {
    throw new CliError(`Configuration: ${(error as Error).message}`);
  }
}

/** The command prints its own lines; PostgreSQL's start-up chatter (when started for it) only on errors. */
function quietLog() {
  return pino({ level: 'warn' }, pino.destination(2));
}

function asCliError(error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof AppError) return new CliError(error.message);
  return new CliError(describe(error));
}

function formatBytes(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
