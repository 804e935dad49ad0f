/**
 * `manifest.json`, the last member of every backup archive: what made it, what it holds, and a
 * SHA-256 of every other member. It comes last because the table data is streamed: its checksums
 * are known only once written. docs/adr/0107-backup-as-a-logical-dump.md explains the choices.
 */

export const MANIFEST_MEMBER = 'manifest.json';
export const SECRET_KEY_MEMBER = 'secret.key';
export const SPOOL_PREFIX = 'spool/';
export const DATABASE_PREFIX = 'database/';
export const ARCHIVE_FORMAT = 'stellwerk-backup';
export const ARCHIVE_FORMAT_VERSION = 1;

export type BackupReason = 'manual' | 'scheduled' | 'before-upgrade';

export interface MemberChecksum {
  name: string;
  bytes: number;
  sha256: string;
}

export interface TableDump {
  name: string;
  /** Columns in the order of the COPY data (generated columns are left out: PostgreSQL computes them). */
  columns: string[];
  rows: number;
  /** The members holding its COPY text, in order; concatenated they are one `COPY … FROM STDIN`. */
  members: string[];
  /** A partition created at run time (monthly time-series partitions), recreated before loading. */
  partitionOf?: { parent: string; bound: string };
}

export interface SequenceDump {
  name: string;
  lastValue: string;
  isCalled: boolean;
}

export interface DatabaseDump {
  postgresVersion: string;
  /** Every migration applied, oldest first (names as `mikro_orm_migrations` holds them). */
  migrations: string[];
  lastMigration: string;
  /** The Stellwerk version that last migrated this database, when it recorded one. */
  migratedBy: string | null;
  tables: TableDump[];
  sequences: SequenceDump[];
}

export interface SpoolSegmentDump {
  member: string;
  firstSeq: number;
  lastSeq: number;
  bytes: number;
}

export interface SpoolDump {
  /** The spool's SPOOL_ID: the database keeps its committed position under this name. */
  spoolId: string | null;
  segments: SpoolSegmentDump[];
  /** The highest seq copied (0: no spooled packet). */
  lastSeq: number;
}

export interface BackupManifest {
  format: typeof ARCHIVE_FORMAT;
  formatVersion: number;
  stellwerkVersion: string;
  createdAt: string;
  reason: BackupReason;
  /** How the archive was made, for the person who has to restore it. */
  method: {
    kind: 'logical-dump';
    description: string;
    embeddedDatabase: boolean;
    host: string;
  };
  /**
   * Every packet acknowledged before `at` is in this archive: in the copied spool segments (read from
   * `at` on) or, when the spool had already handed it on, in the database snapshot (taken after them).
   */
  consistentPoint: {
    at: string;
    spoolLastSeq: number;
    /** The spool position the database snapshot had committed (`packet_spool_position:<spoolId>`). */
    databaseSpoolPosition: number;
    snapshotAt: string;
  };
  database: DatabaseDump;
  secretKey:
    | { source: 'file'; member: typeof SECRET_KEY_MEMBER; fingerprint: string }
    | { source: 'environment'; fingerprint: string };
  spool: SpoolDump;
  members: MemberChecksum[];
}

const ARCHIVE_NAME = /^stellwerk-backup-(\d{8}T\d{6}Z)(-[A-Za-z0-9.]+)*\.tar\.gz$/;

/** `stellwerk-backup-20261126T101500Z.tar.gz`, with `-<suffix>` before `.tar.gz` when given. */
export function archiveName(createdAt: Date, suffix?: string): string {
  const stamp = createdAt
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  return `stellwerk-backup-${stamp}${suffix ? `-${suffix}` : ''}.tar.gz`;
}

/** The creation time an archive's file name carries, or undefined for any other file. */
export function archiveTime(fileName: string): Date | undefined {
  const match = ARCHIVE_NAME.exec(fileName);
  if (!match) return undefined;
  const s = match[1]!;
  return new Date(
    `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}T${s.slice(9, 11)}:${s.slice(11, 13)}:${s.slice(13, 15)}Z`,
  );
}

/** Archives made before an upgrade carry this suffix; scheduled pruning leaves them alone. */
export const beforeUpgradeSuffix = (version: string) => `before-${version}`;
export const isBeforeUpgradeArchive = (fileName: string) => /-before-[A-Za-z0-9.]+\.tar\.gz$/.test(fileName);

/** A manifest from JSON, checked for the fields a restore relies on; throws with the reason. */
export function parseManifest(text: string): BackupManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('its manifest is not valid JSON');
  }
  const manifest = value as Partial<BackupManifest> | null;
  if (manifest?.format !== ARCHIVE_FORMAT) throw new Error('it is not a Stellwerk backup archive');
  if (manifest.formatVersion !== ARCHIVE_FORMAT_VERSION)
    throw new Error(
      `its format version ${String(manifest.formatVersion)} is not ${ARCHIVE_FORMAT_VERSION}, the one this Stellwerk reads`,
    );
  const ok =
    typeof manifest.stellwerkVersion === 'string' &&
    Array.isArray(manifest.members) &&
    Array.isArray(manifest.database?.migrations) &&
    Array.isArray(manifest.database?.tables) &&
    Array.isArray(manifest.database?.sequences) &&
    Array.isArray(manifest.spool?.segments) &&
    typeof manifest.secretKey?.source === 'string';
  if (!ok) throw new Error('its manifest lacks required fields');
  return manifest as BackupManifest;
}
