import { open, readdir, readFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { recordSeqAt, validRecordEnd } from '../ingest/spool/spool-record.js';
import type { ArchiveWriter } from './archive.js';
import { SPOOL_PREFIX, type SpoolDump, type SpoolSegmentDump } from './backup.manifest.js';

/**
 * Copies the packet spool (ADR 0103) into the archive while the server appends to it and deletes
 * what PostgreSQL committed. Safe without the server's cooperation because:
 * - segments are append-only: the bytes of every record synced before the copy began are stable;
 * - a segment is deleted only after PostgreSQL committed all its records, and the database snapshot
 *   is taken after this copy, so a segment gone before it was opened is covered by the snapshot;
 * - each segment is cut at its last whole, crc-valid record in sequence (a group being written is
 *   left out), exactly as the spool itself reads it at start (spool-files.ts `scanSegments`).
 */

const SEGMENT_NAME = /^(\d{20})\.seg$/;
const READ_BYTES = 1024 * 1024;
export const SPOOL_ID_MEMBER = `${SPOOL_PREFIX}SPOOL_ID`;

export async function copySpool(dir: string, archive: ArchiveWriter): Promise<SpoolDump> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => SEGMENT_NAME.test(name)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      return { spoolId: null, segments: [], lastSeq: 0 };
    throw error;
  }
  const spoolId = await readFile(path.join(dir, 'SPOOL_ID'), 'utf8').then(
    (text) => text.trim(),
    () => null,
  );
  if (spoolId) await archive.addBuffer(SPOOL_ID_MEMBER, Buffer.from(`${spoolId}\n`));
  const segments: SpoolSegmentDump[] = [];
  for (const [index, name] of names.entries()) {
    const firstSeq = Number(SEGMENT_NAME.exec(name)![1]);
    const next = names[index + 1];
    const stopBeforeSeq = next ? Number(SEGMENT_NAME.exec(next)![1]) : Number.MAX_SAFE_INTEGER;
    let handle: FileHandle;
    try {
      handle = await open(path.join(dir, name), 'r');
    } catch (error) {
      // Deleted since the listing: committed to PostgreSQL, so in the snapshot that follows.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    try {
      const { validBytes, lastSeq } = await validPrefix(handle, firstSeq, stopBeforeSeq);
      if (validBytes === 0) continue;
      const member = `${SPOOL_PREFIX}${name}`;
      await archive.addStream(member, validBytes, readRange(handle, validBytes));
      segments.push({ member, firstSeq, lastSeq, bytes: validBytes });
    } finally {
      await handle.close();
    }
  }
  return { spoolId, segments, lastSeq: segments.reduce((last, s) => Math.max(last, s.lastSeq), 0) };
}

/** How many leading bytes of the file are whole records with seqs firstSeq, firstSeq + 1, … */
async function validPrefix(
  handle: FileHandle,
  firstSeq: number,
  stopBeforeSeq: number,
): Promise<{ validBytes: number; lastSeq: number }> {
  const size = (await handle.stat()).size;
  let carry = Buffer.alloc(0);
  let fileOffset = 0;
  let validBytes = 0;
  let seq = firstSeq;
  while (seq < stopBeforeSeq) {
    if (carry.length < 4 && !(await fill(4))) break;
    const recordBytes = 4 + carry.readUInt32LE(0);
    // A torn length field may claim more than the file holds: that ends the valid part at once.
    if (recordBytes > size - validBytes || !(await fill(recordBytes))) break;
    const record = carry.subarray(0, recordBytes);
    if (validRecordEnd(record, 0) !== recordBytes || recordSeqAt(record, 0) !== seq) break;
    carry = carry.subarray(recordBytes);
    validBytes += recordBytes;
    seq += 1;
  }
  return { validBytes, lastSeq: seq - 1 };

  async function fill(count: number): Promise<boolean> {
    while (carry.length < count && fileOffset < size) {
      const piece = Buffer.allocUnsafe(Math.min(READ_BYTES, Math.max(count - carry.length, 64 * 1024)));
      const { bytesRead } = await handle.read(
        piece,
        0,
        Math.min(piece.length, size - fileOffset),
        fileOffset,
      );
      if (bytesRead === 0) break;
      fileOffset += bytesRead;
      carry =
        carry.length === 0
          ? piece.subarray(0, bytesRead)
          : Buffer.concat([carry, piece.subarray(0, bytesRead)]);
    }
    return carry.length >= count;
  }
}

async function* readRange(handle: FileHandle, bytes: number): AsyncGenerator<Buffer> {
  for (let offset = 0; offset < bytes;) {
    const piece = Buffer.allocUnsafe(Math.min(READ_BYTES, bytes - offset));
    const { bytesRead } = await handle.read(piece, 0, piece.length, offset);
    if (bytesRead === 0) throw new Error('a spool segment became shorter while it was copied');
    offset += bytesRead;
    yield piece.subarray(0, bytesRead);
  }
}

/** The file a spool member is restored to (its name in the spool directory). */
export function spoolFileOf(member: string): string | undefined {
  const name = member.slice(SPOOL_PREFIX.length);
  return member.startsWith(SPOOL_PREFIX) && (SEGMENT_NAME.test(name) || name === 'SPOOL_ID')
    ? name
    : undefined;
}
