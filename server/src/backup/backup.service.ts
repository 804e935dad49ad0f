import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { syncDirectory } from '../ingest/spool/spool-files.js';
import { safeErrorMessage } from '../platform/db/database-errors.js';
import { VERSION } from '../version.js';
import { ArchiveWriter } from './archive.js';
import { backupErrors, isAppError } from './backup.errors.js';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_FORMAT_VERSION,
  SECRET_KEY_MEMBER,
  type BackupManifest,
  type BackupReason,
} from './backup.manifest.js';
import { dumpDatabase } from './database-dump.js';
import { copySpool } from './spool-copy.js';

/** What a backup reads: the database, and the files of the data directory that belong to it. */
export interface BackupSource {
  databaseUrl: string;
  embeddedDatabase: boolean;
  dataDir: string;
  spoolDir: string;
  /** The key from STELLWERK_SECRET_KEY; undefined: `<dataDir>/secret.key`. */
  secretKey: Buffer | undefined;
}

export interface BackupResult {
  file: string;
  bytes: number;
  durationMs: number;
  manifest: BackupManifest;
}

const METHOD_DESCRIPTION =
  'Logical dump made by Stellwerk itself: the packet spool copied first, then every table as COPY text ' +
  'in one REPEATABLE READ READ ONLY transaction on an ordinary connection; no PostgreSQL client tools. ' +
  'Restore replays the migrations the archive lists, loads the tables, then migrates (docs/adr/0107).';

/**
 * Writes one archive to `out` (a temporary `.partial` name until complete, mode 600). Works while
 * the server runs and ingests: see spool-copy.ts and database-dump.ts for why the copy is
 * consistent, and `BackupManifest.consistentPoint` for what it guarantees.
 */
export async function createBackup(
  source: BackupSource,
  options: { out: string; reason: BackupReason; clock?: () => Date },
): Promise<BackupResult> {
  const clock = options.clock ?? (() => new Date());
  const started = performance.now();
  const createdAt = clock();
  const directory = path.dirname(options.out);
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const partial = `${options.out}.partial`;
  await unlink(partial).catch(() => undefined);
  const archive = ArchiveWriter.create(partial);
  try {
    const secretKey = await addSecretKey(source, archive);
    // The consistent point: every packet acknowledged before now is in a spool segment now.
    const consistentAt = clock();
    const spool = await copySpool(source.spoolDir, archive);
    const { dump, spoolPositions, snapshotAt } = await dumpDatabase(source.databaseUrl, archive);
    const manifest = await archive.finish({
      format: ARCHIVE_FORMAT,
      formatVersion: ARCHIVE_FORMAT_VERSION,
      stellwerkVersion: VERSION,
      createdAt: createdAt.toISOString(),
      reason: options.reason,
      method: {
        kind: 'logical-dump',
        description: METHOD_DESCRIPTION,
        embeddedDatabase: source.embeddedDatabase,
        host: os.hostname(),
      },
      consistentPoint: {
        at: consistentAt.toISOString(),
        spoolLastSeq: spool.lastSeq,
        databaseSpoolPosition: spool.spoolId ? (spoolPositions.get(spool.spoolId) ?? 0) : 0,
        snapshotAt: snapshotAt.toISOString(),
      },
      database: dump,
      secretKey,
      spool,
    });
    await rename(partial, options.out);
    await syncDirectory(directory);
    return {
      file: options.out,
      bytes: (await stat(options.out)).size,
      durationMs: Math.round(performance.now() - started),
      manifest,
    };
  } catch (error) {
    await archive.abort();
    await unlink(partial).catch(() => undefined);
    throw isAppError(error) ? error : backupErrors.failed(describe(error));
  }
}

/** SHA-256 of the key: tells at restore whether a configured key is the one the data was sealed with. */
export const keyFingerprint = (key: Buffer) => `sha256:${createHash('sha256').update(key).digest('hex')}`;

async function addSecretKey(
  source: BackupSource,
  archive: ArchiveWriter,
): Promise<BackupManifest['secretKey']> {
  if (source.secretKey) return { source: 'environment', fingerprint: keyFingerprint(source.secretKey) };
  const file = path.join(source.dataDir, 'secret.key');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw backupErrors.failed(
      (error as NodeJS.ErrnoException).code === 'ENOENT'
        ? `${file} does not exist: without it enrolled 2FA and OAuth client secrets could not be read after a restore (set STELLWERK_SECRET_KEY if the key comes from the environment)`
        : `${file} cannot be read (${describe(error)})`,
    );
  }
  const key = Buffer.from(text.trim(), 'base64');
  await archive.addBuffer(SECRET_KEY_MEMBER, Buffer.from(text, 'utf8'));
  return { source: 'file', member: SECRET_KEY_MEMBER, fingerprint: keyFingerprint(key) };
}

/** One line for people; a database error's text never carries its statement or bound values. */
export function describe(error: unknown): string {
  const message = safeErrorMessage(error);
  return (error as NodeJS.ErrnoException).code === 'ENOSPC' ? `the disk is full (${message})` : message;
}
