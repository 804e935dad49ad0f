import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { ArchiveRejected, ArchiveWriter, ChunkedMember, CHUNK_BYTES, verifyArchive } from './archive.js';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_FORMAT_VERSION,
  archiveName,
  archiveTime,
  isBeforeUpgradeArchive,
  beforeUpgradeSuffix,
  type BackupManifest,
} from './backup.manifest.js';
import { compareVersions } from './upgrade-guard.js';
import { refuseNewerSchema } from './restore.service.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'stellwerk-archive-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const manifestBase = (): Omit<BackupManifest, 'members'> => ({
  format: ARCHIVE_FORMAT,
  formatVersion: ARCHIVE_FORMAT_VERSION,
  stellwerkVersion: '0.2.0',
  createdAt: new Date().toISOString(),
  reason: 'manual',
  method: { kind: 'logical-dump', description: 'test', embeddedDatabase: true, host: 'test' },
  consistentPoint: {
    at: new Date().toISOString(),
    spoolLastSeq: 0,
    databaseSpoolPosition: 0,
    snapshotAt: '',
  },
  database: {
    postgresVersion: '18',
    migrations: ['Migration1'],
    lastMigration: 'Migration1',
    migratedBy: '0.2.0',
    tables: [],
    sequences: [],
  },
  secretKey: { source: 'environment', fingerprint: 'sha256:x' },
  spool: { spoolId: null, segments: [], lastSeq: 0 },
});

async function writeArchive(name: string, members: Record<string, Buffer>): Promise<string> {
  const file = path.join(dir, name);
  const writer = ArchiveWriter.create(file);
  for (const [member, data] of Object.entries(members)) await writer.addBuffer(member, data);
  await writer.finish(manifestBase());
  return file;
}

describe('backup archive', () => {
  it('is a tar.gz that tar lists, with checksums that verify', async () => {
    const file = await writeArchive('plain.tar.gz', {
      'secret.key': Buffer.from('key'),
      'a/b': Buffer.alloc(700, 1),
    });
    expect(execFileSync('tar', ['tzf', file], { encoding: 'utf8' }).trim().split('\n')).toEqual([
      'secret.key',
      'a/b',
      'manifest.json',
    ]);
    const manifest = await verifyArchive(file);
    expect(manifest.members.map((m) => [m.name, m.bytes])).toEqual([
      ['secret.key', 3],
      ['a/b', 700],
    ]);
  });

  it('cuts table data into members of at most CHUNK_BYTES, an empty table into one empty member', async () => {
    const file = path.join(dir, 'chunks.tar.gz');
    const writer = ArchiveWriter.create(file);
    const big = new ChunkedMember(writer, 'database/big');
    for (let i = 0; i < 5; i += 1) await big.write(Buffer.alloc(CHUNK_BYTES / 2, 97));
    await big.end();
    const empty = new ChunkedMember(writer, 'database/empty');
    await empty.end();
    await writer.finish(manifestBase());
    expect(big.names).toEqual(['database/big/000001', 'database/big/000002', 'database/big/000003']);
    expect(empty.names).toEqual(['database/empty/000001']);
    expect((await verifyArchive(file)).members.map((m) => m.bytes)).toEqual([
      CHUNK_BYTES,
      CHUNK_BYTES,
      CHUNK_BYTES / 2,
      0,
    ]);
  });

  it('refuses a changed member, a truncated file and a file that is not an archive', async () => {
    const file = await writeArchive('tamper.tar.gz', { 'secret.key': Buffer.from('AAAA') });
    const tar = gunzipSync(readFileSync(file));
    tar[512] = 0x42;
    writeFileSync(path.join(dir, 'changed.tar.gz'), gzipSync(tar));
    await expect(verifyArchive(path.join(dir, 'changed.tar.gz'))).rejects.toThrow(
      /does not match its checksum/,
    );
    const whole = readFileSync(file);
    writeFileSync(path.join(dir, 'short.tar.gz'), whole.subarray(0, whole.length - 20));
    await expect(verifyArchive(path.join(dir, 'short.tar.gz'))).rejects.toBeInstanceOf(ArchiveRejected);
    writeFileSync(path.join(dir, 'text.tar.gz'), gzipSync(Buffer.alloc(2048, 0x20)));
    await expect(verifyArchive(path.join(dir, 'text.tar.gz'))).rejects.toThrow(/not a Stellwerk backup/);
  });

  it('refuses a member the manifest does not list', async () => {
    const file = await writeArchive('extra.tar.gz', { x: Buffer.from('1') });
    const tar = gunzipSync(readFileSync(file));
    // Rename member "x" to "y": same bytes, but a name the manifest does not know.
    tar[0] = 0x79;
    tar.write(`${(tarChecksum(tar.subarray(0, 512)) >>> 0).toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
    writeFileSync(path.join(dir, 'renamed.tar.gz'), gzipSync(tar));
    await expect(verifyArchive(path.join(dir, 'renamed.tar.gz'))).rejects.toThrow(/member x is missing/);
  });

  it('names archives by UTC time; pre-upgrade archives are told apart', () => {
    const at = new Date('2026-11-26T10:15:00Z');
    expect(archiveName(at)).toBe('stellwerk-backup-20261126T101500Z.tar.gz');
    expect(archiveTime(archiveName(at, beforeUpgradeSuffix('0.2.0')))).toEqual(at);
    expect(isBeforeUpgradeArchive(archiveName(at, beforeUpgradeSuffix('0.2.0')))).toBe(true);
    expect(isBeforeUpgradeArchive(archiveName(at))).toBe(false);
    expect(archiveTime('notes.txt')).toBeUndefined();
  });
});

describe('schema versions', () => {
  it('refuses an archive with a migration this build lacks, naming both versions', () => {
    const manifest = { ...manifestBase(), members: [] } as BackupManifest;
    expect(() => refuseNewerSchema(manifest, ['Migration1', 'Migration2'])).not.toThrow();
    manifest.database = {
      ...manifest.database,
      migrations: ['Migration1', 'Migration3'],
      lastMigration: 'Migration3',
      migratedBy: '0.3.0',
    };
    expect(() => refuseNewerSchema(manifest, ['Migration1', 'Migration2'])).toThrow(
      /Stellwerk 0\.3\.0 \(schema Migration3\); this is Stellwerk .*newest schema is Migration2/,
    );
  });

  it('orders versions numerically', () => {
    expect(compareVersions('0.10.0', '0.9.1')).toBeGreaterThan(0);
    expect(compareVersions('0.2.0', '0.2.0')).toBe(0);
    expect(compareVersions('0.1.9', '0.2.0')).toBeLessThan(0);
  });
});

function tarChecksum(header: Buffer): number {
  let sum = 0;
  for (let i = 0; i < 512; i += 1) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
  return sum;
}
