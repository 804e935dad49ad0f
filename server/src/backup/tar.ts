/**
 * The part of the tar format (POSIX ustar) the backup archive needs: regular files only, names of
 * at most 100 bytes, written and read as streams so no member is ever held whole in memory.
 * `tar tzf` and `tar xzf` read what this writes.
 */

export const TAR_BLOCK = 512;
const NAME_BYTES = 100;
/** 11 octal digits: 8 GiB - 1 per member (table data is cut into far smaller pieces). */
const MAX_SIZE = 8 ** 11 - 1;

/** The 512-byte header of a regular file. */
export function tarHeader(name: string, size: number, mtime: Date, mode = 0o600): Buffer {
  const nameBytes = Buffer.from(name, 'utf8');
  if (nameBytes.length === 0 || nameBytes.length > NAME_BYTES)
    throw new RangeError(`tar member name must be 1 to ${NAME_BYTES} bytes: ${name}`);
  if (!Number.isSafeInteger(size) || size < 0 || size > MAX_SIZE)
    throw new RangeError(`tar member ${name} has an unsupported size ${size}`);
  const header = Buffer.alloc(TAR_BLOCK);
  nameBytes.copy(header, 0);
  octal(header, 100, 8, mode);
  octal(header, 108, 8, 0); // uid
  octal(header, 116, 8, 0); // gid
  octal(header, 124, 12, size);
  octal(header, 136, 12, Math.floor(mtime.getTime() / 1000));
  header.fill(0x20, 148, 156); // checksum field counts as spaces while summing
  header.write('0', 156, 'latin1'); // regular file
  header.write('ustar\u000000', 257, 'latin1');
  octal(header, 148, 7, checksum(header));
  return header;
}

/** Zero bytes that bring a member of `size` bytes to a whole block. */
export function tarPadding(size: number): Buffer {
  const rest = size % TAR_BLOCK;
  return Buffer.alloc(rest === 0 ? 0 : TAR_BLOCK - rest);
}

/** The end of an archive: two zero blocks. */
export const TAR_END = Buffer.alloc(2 * TAR_BLOCK);

export interface TarEntry {
  name: string;
  size: number;
  /** The member's bytes; whatever the consumer leaves unread is skipped before the next entry. */
  body: AsyncIterable<Buffer>;
}

export class TarFormatError extends Error {}

/** The entries of a tar stream, in order. Throws TarFormatError on anything this module does not write. */
export async function* readTar(source: AsyncIterable<Buffer>): AsyncGenerator<TarEntry> {
  const bytes = new ByteReader(source[Symbol.asyncIterator]());
  for (;;) {
    if (!(await bytes.fill(TAR_BLOCK))) throw new TarFormatError('the archive ends without its end marker');
    const header = bytes.take(TAR_BLOCK);
    if (header.every((byte) => byte === 0)) return;
    const entry = parseHeader(header);
    let remaining = entry.size;
    const body = async function* (): AsyncGenerator<Buffer> {
      while (remaining > 0) {
        const piece = await bytes.takeUpTo(remaining);
        if (!piece) throw new TarFormatError(`the archive ends inside member ${entry.name}`);
        remaining -= piece.length;
        yield piece;
      }
    };
    yield { ...entry, body: body() };
    // Unread rest of the body, then the padding to the block boundary.
    while (remaining > 0) {
      const piece = await bytes.takeUpTo(remaining);
      if (!piece) throw new TarFormatError(`the archive ends inside member ${entry.name}`);
      remaining -= piece.length;
    }
    const padding = tarPadding(entry.size).length;
    if (padding > 0) {
      if (!(await bytes.fill(padding))) throw new TarFormatError('the archive ends inside a padding block');
      bytes.take(padding);
    }
  }
}

function parseHeader(header: Buffer): { name: string; size: number } {
  const stored = Number.parseInt(header.toString('latin1', 148, 156).replace(/[\0 ]+$/, ''), 8);
  if (stored !== checksum(header))
    throw new TarFormatError('a tar header is damaged (checksum mismatch): this is not a Stellwerk backup');
  if (header.toString('latin1', 257, 262) !== 'ustar')
    throw new TarFormatError('not a ustar archive: this is not a Stellwerk backup');
  const type = header.toString('latin1', 156, 157);
  if (type !== '0' && type !== '\0') throw new TarFormatError(`unsupported tar member type "${type}"`);
  const end = header.indexOf(0, 0);
  const name = header.toString('utf8', 0, end < 0 || end > NAME_BYTES ? NAME_BYTES : end);
  const size = Number.parseInt(header.toString('latin1', 124, 136).replace(/[\0 ]+$/, ''), 8);
  if (!Number.isSafeInteger(size) || size < 0) throw new TarFormatError(`member ${name} has a bad size`);
  return { name, size };
}

function octal(target: Buffer, offset: number, length: number, value: number): void {
  target.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'latin1');
}

function checksum(header: Buffer): number {
  let sum = 0;
  for (let i = 0; i < TAR_BLOCK; i += 1) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
  return sum;
}

/** Pulls chunks from a stream and hands out exact byte counts. */
class ByteReader {
  private buffered: Buffer[] = [];
  private length = 0;
  private ended = false;

  constructor(private readonly source: AsyncIterator<Buffer>) {}

  /** Buffers at least `count` bytes; false when the stream ends first. */
  async fill(count: number): Promise<boolean> {
    while (this.length < count && !this.ended) await this.pull();
    return this.length >= count;
  }

  take(count: number): Buffer {
    const joined = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered);
    this.buffered = joined.length > count ? [joined.subarray(count)] : [];
    this.length -= count;
    return joined.subarray(0, count);
  }

  /** Up to `count` bytes, as many as one chunk holds; undefined at the end of the stream. */
  async takeUpTo(count: number): Promise<Buffer | undefined> {
    if (this.length === 0 && !(await this.fill(1))) return undefined;
    const first = this.buffered[0]!;
    if (first.length <= count) {
      this.buffered.shift();
      this.length -= first.length;
      return first;
    }
    this.buffered[0] = first.subarray(count);
    this.length -= count;
    return first.subarray(0, count);
  }

  private async pull(): Promise<void> {
    const next = await this.source.next();
    if (next.done) {
      this.ended = true;
      return;
    }
    const chunk = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
    if (chunk.length === 0) return;
    this.buffered.push(chunk);
    this.length += chunk.length;
  }
}
