import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import {
  MANIFEST_MEMBER,
  parseManifest,
  type BackupManifest,
  type MemberChecksum,
} from './backup.manifest.js';
import { readTar, TAR_END, tarHeader, tarPadding, TarFormatError, type TarEntry } from './tar.js';

/** Table data is cut into members of at most this size: memory stays bounded and sizes known. */
export const CHUNK_BYTES = 4 * 1024 * 1024;
/** A manifest larger than this is refused unread (a real one lists a few thousand members at most). */
const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;

/**
 * Writes a gzip-compressed tar to `path` (mode 600: it holds the secret key and password hashes)
 * with a SHA-256 of every member, kept for the manifest. Streaming with backpressure; the caller
 * writes to a temporary name and renames after `finish`.
 */
export class ArchiveWriter {
  readonly members: MemberChecksum[] = [];
  private readonly gzip = createGzip({ level: 6 });
  private readonly written: Promise<void>;
  private failure: Error | undefined;
  private readonly mtime = new Date();

  private constructor(readonly path: string) {
    const file = createWriteStream(path, { flags: 'wx', mode: 0o600 });
    this.written = pipeline(this.gzip, file);
    this.written.catch((error: unknown) => {
      this.failure = error instanceof Error ? error : new Error(String(error));
    });
  }

  static create(path: string): ArchiveWriter {
    return new ArchiveWriter(path);
  }

  async addBuffer(name: string, data: Buffer): Promise<void> {
    await this.addStream(name, data.length, [data]);
  }

  /** A member of exactly `size` bytes from `source`; throws when the source yields more or fewer. */
  async addStream(
    name: string,
    size: number,
    source: Iterable<Buffer> | AsyncIterable<Buffer>,
  ): Promise<void> {
    const hash = createHash('sha256');
    await this.write(tarHeader(name, size, this.mtime));
    let count = 0;
    for await (const piece of source) {
      count += piece.length;
      if (count > size) throw new Error(`member ${name} grew beyond its ${size} bytes while written`);
      hash.update(piece);
      await this.write(piece);
    }
    if (count !== size) throw new Error(`member ${name} has ${count} of its ${size} bytes`);
    await this.write(tarPadding(size));
    this.members.push({ name, bytes: size, sha256: hash.digest('hex') });
  }

  /** Writes the manifest (with the member checksums), the end marker, and syncs the file. */
  async finish(manifest: Omit<BackupManifest, 'members'>): Promise<BackupManifest> {
    const complete: BackupManifest = { ...manifest, members: [...this.members] };
    const text = Buffer.from(`${JSON.stringify(complete, null, 2)}\n`, 'utf8');
    await this.write(tarHeader(MANIFEST_MEMBER, text.length, this.mtime));
    await this.write(text);
    await this.write(tarPadding(text.length));
    await this.write(TAR_END);
    this.gzip.end();
    await this.written;
    const handle = await open(this.path, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    return complete;
  }

  /** Stops writing; the caller deletes the file. */
  async abort(): Promise<void> {
    this.gzip.destroy();
    await this.written.catch(() => undefined);
  }

  private async write(bytes: Buffer): Promise<void> {
    this.throwIfFailed();
    if (bytes.length === 0) return;
    if (!this.gzip.write(bytes)) {
      await Promise.race([once(this.gzip, 'drain'), this.written.then(() => undefined)]);
      this.throwIfFailed();
    }
  }

  /** The file stream fails asynchronously (disk full …); the next write reports it. */
  private throwIfFailed(): void {
    const failure: Error | undefined = this.failure;
    if (failure) throw failure;
  }
}

/** Collects written pieces into members of at most CHUNK_BYTES: `<prefix>/000001`, `<prefix>/000002` … */
export class ChunkedMember {
  readonly names: string[] = [];
  private pieces: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly archive: ArchiveWriter,
    private readonly prefix: string,
  ) {}

  async write(piece: Buffer): Promise<void> {
    this.pieces.push(piece);
    this.size += piece.length;
    if (this.size >= CHUNK_BYTES) await this.flush();
  }

  /** Writes what is buffered; an empty table still gets one (empty) member. */
  async end(): Promise<void> {
    if (this.size > 0 || this.names.length === 0) await this.flush();
  }

  private async flush(): Promise<void> {
    const name = `${this.prefix}/${String(this.names.length + 1).padStart(6, '0')}`;
    const pieces = this.pieces;
    const size = this.size;
    this.pieces = [];
    this.size = 0;
    await this.archive.addStream(name, size, pieces);
    this.names.push(name);
  }
}

/** Why an archive is refused before anything is restored from it. */
export class ArchiveRejected extends Error {}

/** The members of an archive, in order, read from a stream of the file. */
export async function* readArchive(path: string): AsyncGenerator<TarEntry> {
  const gunzip = createGunzip();
  const file = createReadStream(path);
  const piped = pipeline(file, gunzip);
  piped.catch(() => undefined);
  try {
    yield* readTar(gunzip as AsyncIterable<Buffer>);
  } catch (error) {
    throw damaged(error);
  } finally {
    file.destroy();
    gunzip.destroy();
  }
}

/**
 * Reads the whole archive once and checks every member against the manifest's SHA-256 and size:
 * a member damaged, changed, missing or added, or the manifest not last, refuses the archive.
 * Nothing is written. Returns the manifest.
 */
export async function verifyArchive(path: string): Promise<BackupManifest> {
  const seen = new Map<string, MemberChecksum>();
  let manifestText: string | undefined;
  try {
    manifestText = await checksumMembers(path, seen);
  } catch (error) {
    // A member body is read here, outside readArchive: its gzip or tar errors surface here too.
    throw damaged(error);
  }
  if (manifestText === undefined) throw new ArchiveRejected(`it has no ${MANIFEST_MEMBER}`);
  return checkAgainstManifest(manifestText, seen);
}

/** Reads every member once, recording its size and SHA-256 in `seen`; returns the manifest's text. */
async function checksumMembers(path: string, seen: Map<string, MemberChecksum>): Promise<string | undefined> {
  let manifestText: string | undefined;
  for await (const entry of readArchive(path)) {
    if (manifestText !== undefined) throw new ArchiveRejected(`member ${entry.name} follows the manifest`);
    if (entry.name === MANIFEST_MEMBER) {
      if (entry.size > MAX_MANIFEST_BYTES) throw new ArchiveRejected('its manifest is implausibly large');
      const pieces: Buffer[] = [];
      for await (const piece of entry.body) pieces.push(piece);
      manifestText = Buffer.concat(pieces).toString('utf8');
      continue;
    }
    if (seen.has(entry.name)) throw new ArchiveRejected(`member ${entry.name} appears twice`);
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const piece of entry.body) {
      hash.update(piece);
      bytes += piece.length;
    }
    seen.set(entry.name, { name: entry.name, bytes, sha256: hash.digest('hex') });
  }
  return manifestText;
}

/** The manifest against the checksums taken: every listed member present and equal, none more. */
function checkAgainstManifest(manifestText: string, seen: Map<string, MemberChecksum>): BackupManifest {
  let manifest: BackupManifest;
  try {
    manifest = parseManifest(manifestText);
  } catch (error) {
    throw new ArchiveRejected((error as Error).message);
  }
  for (const expected of manifest.members) {
    const found = seen.get(expected.name);
    if (!found) throw new ArchiveRejected(`member ${expected.name} is missing`);
    if (found.bytes !== expected.bytes || found.sha256 !== expected.sha256) {
      throw new ArchiveRejected(
        `member ${expected.name} does not match its checksum (SHA-256 ${found.sha256.slice(0, 12)}…, manifest ${expected.sha256.slice(0, 12)}…): the archive was changed or damaged`,
      );
    }
    seen.delete(expected.name);
  }
  const extra = [...seen.keys()];
  if (extra.length > 0) throw new ArchiveRejected(`member ${extra[0]} is not in the manifest`);
  return manifest;
}

function damaged(error: unknown): Error {
  if (error instanceof ArchiveRejected) return error;
  if (error instanceof TarFormatError) return new ArchiveRejected(error.message);
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR') return error as Error;
  if (typeof code === 'string' && code.startsWith('Z_'))
    return new ArchiveRejected(`it is not a complete gzip file (${(error as Error).message})`);
  return error as Error;
}
