import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { open, readdir, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { recordSeqAt, validRecordEnd } from './spool-record.js';

/** The spool directory's files: segment naming and scanning, directory fsync, the LOCK file. */

export interface SpoolGroup {
  firstSeq: number;
  lastSeq: number;
  /** The records' bytes as written, in its own ArrayBuffer (transferable to a worker). */
  bytes: Uint8Array;
  /** Seqs of the packets an `onAccepted` listener declined (groups just written; none when read back). */
  declinedSeqs?: number[];
}

export interface SegmentFile {
  path: string;
  /** The seq its name carries: its first record's, when it has one. */
  firstSeq: number;
  /** `firstSeq - 1` while it holds no record. */
  lastSeq: number;
  /** Bytes from the start that hold durable records; anything after them is to be ignored. */
  durableBytes: number;
}

const SEGMENT_NAME = /^(\d{20})\.seg$/;

export function segmentPath(dir: string, firstSeq: number): string {
  return path.join(dir, `${String(firstSeq).padStart(20, '0')}.seg`);
}

/**
 * The segment files in seq order, each cut to its valid records. A segment's records run on from
 * its name's seq without gaps, and stop before the next segment's name: after a failed write whose
 * bytes could not be truncated, the spool continues in a new segment named by the refused group's
 * first seq, which is how those refused records stay ignored here.
 */
export async function scanSegments(dir: string, log: FastifyBaseLogger): Promise<SegmentFile[]> {
  const names = (await readdir(dir)).filter((name) => SEGMENT_NAME.test(name)).sort();
  const firstSeqs = names.map((name) => Number(SEGMENT_NAME.exec(name)![1]));
  const segments: SegmentFile[] = [];
  for (const [index, name] of names.entries()) {
    const firstSeq = firstSeqs[index]!;
    const stopBeforeSeq = firstSeqs[index + 1] ?? Number.MAX_SAFE_INTEGER;
    const file = path.join(dir, name);
    const bytes = await readFile(file);
    let offset = 0;
    let seq = firstSeq;
    while (seq < stopBeforeSeq) {
      const end = validRecordEnd(bytes, offset);
      if (end < 0 || recordSeqAt(bytes, offset) !== seq) break;
      offset = end;
      seq += 1;
    }
    if (offset < bytes.length) {
      log.warn(
        { file, validBytes: offset, ignoredBytes: bytes.length - offset },
        'packet spool: ignoring the torn or refused tail of a segment',
      );
    }
    segments.push({ path: file, firstSeq, lastSeq: seq - 1, durableBytes: offset });
  }
  return segments;
}

/**
 * The segment's durable records with seq > afterSeq, as groups of at most `maxGroupBytes` (a
 * larger single record is a group of its own). Synchronous: the caller must get a consistent view
 * while appends continue. Each group is copied into its own buffer so it can be transferred.
 */
export function readSegmentGroups(
  segment: SegmentFile,
  afterSeq: number,
  maxGroupBytes: number,
): SpoolGroup[] {
  if (segment.lastSeq <= afterSeq || segment.durableBytes === 0) return [];
  const bytes = new Uint8Array(segment.durableBytes);
  const fd = fs.openSync(segment.path, 'r');
  try {
    let filled = 0;
    while (filled < bytes.length) {
      const read = fs.readSync(fd, bytes, filled, bytes.length - filled, filled);
      if (read === 0) throw new Error(`${segment.path} is shorter than its ${bytes.length} durable bytes`);
      filled += read;
    }
  } finally {
    fs.closeSync(fd);
  }
  const view = Buffer.from(bytes.buffer);
  const groups: SpoolGroup[] = [];
  let offset = 0;
  let seq = segment.firstSeq;
  // Records up to afterSeq are skipped by their lengths alone: they were verified when written or scanned.
  while (seq <= afterSeq) {
    offset += 4 + view.readUInt32LE(offset);
    seq += 1;
  }
  while (offset < bytes.length) {
    const start = offset;
    const firstSeq = seq;
    do {
      offset += 4 + view.readUInt32LE(offset);
      seq += 1;
    } while (offset < bytes.length && offset + 4 + view.readUInt32LE(offset) - start <= maxGroupBytes);
    groups.push({ firstSeq, lastSeq: seq - 1, bytes: bytes.slice(start, offset) });
  }
  return groups;
}

/** Makes file creations and deletions in `dir` durable. */
export async function syncDirectory(dir: string): Promise<void> {
  // Windows cannot open a directory for fsync; NTFS journals its metadata changes itself.
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Deletes committed segments. Errors are logged: a segment left behind is deleted at the next start. */
export async function deleteSegments(
  dir: string,
  segments: SegmentFile[],
  log: FastifyBaseLogger,
): Promise<void> {
  if (segments.length === 0) return;
  for (const segment of segments) {
    await unlink(segment.path).catch((error: unknown) =>
      log.error({ err: error, file: segment.path }, 'packet spool: could not delete a committed segment'),
    );
  }
  await syncDirectory(dir).catch((error: unknown) =>
    log.error({ err: error, dir }, 'packet spool: could not sync the directory'),
  );
}

/** Directories locked by spools of this process, to tell our own LOCK from a stale one with our pid. */
const lockedHere = new Set<string>();

/**
 * Takes `dir/LOCK` for this process. A LOCK naming a pid that is not alive is stale and replaced,
 * as is one naming this process's pid that no spool here holds (a container restarts with the same
 * pid). Pid reuse by an unrelated process makes a stale LOCK look live: the error says which file
 * to remove.
 */
export async function acquireLock(dir: string): Promise<void> {
  const lockPath = path.join(dir, 'LOCK');
  const key = path.resolve(dir);
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const handle = await open(lockPath, 'wx', 0o600);
      try {
        await handle.writeFile(`${process.pid}\n`);
      } finally {
        await handle.close();
      }
      lockedHere.add(key);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number.parseInt(await readFile(lockPath, 'utf8').catch(() => ''), 10);
    const live = holder === process.pid ? lockedHere.has(key) : isAlive(holder);
    if (live) {
      throw new Error(
        `The packet spool directory ${dir} is in use by process ${holder} (remove ${lockPath} if it is not a Stellwerk server)`,
      );
    }
    await unlink(lockPath).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
  throw new Error(`Could not take ${lockPath}: another process keeps creating it`);
}

/**
 * The spool's identity (`SPOOL_ID`, a random UUID written once): the packet table records its
 * position under this name, so it survives restarts and node renames, and a new or replaced spool
 * directory starts from position 0 instead of taking over another spool's.
 */
export async function readOrCreateSpoolId(dir: string): Promise<string> {
  const file = path.join(dir, 'SPOOL_ID');
  try {
    const id = (await readFile(file, 'utf8')).trim();
    if (/^[0-9a-f-]{36}$/.test(id)) return id;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const id = randomUUID();
  const handle = await open(file, 'w', 0o600);
  try {
    await handle.writeFile(`${id}\n`);
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await syncDirectory(dir);
  return id;
}

export async function releaseLock(dir: string): Promise<void> {
  lockedHere.delete(path.resolve(dir));
  await unlink(path.join(dir, 'LOCK'));
}

function isAlive(pid: number): boolean {
  // A LOCK without a readable pid was cut short while being written: its writer never held it.
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
