import type { Duplex } from 'node:stream';

/**
 * Joins the small writes one client gets in one tick into a single socket write. Aedes (through
 * mqtt-packet) writes every PUBACK as two or three tiny buffers; after a group commit a client gets
 * hundreds of them at once, and each buffer costs a pass through the stream machinery and an iovec.
 * Buffers without a callback are collected and written as one on the next tick; anything else (a
 * string, a callback, `end`) first flushes what is collected, so the byte order never changes.
 * Back-pressure is the socket's own: `write` answers false while the socket needs a drain.
 */
export function coalesceWrites(stream: Duplex): void {
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  const end = stream.end.bind(stream) as (...args: unknown[]) => Duplex;
  let pending: Buffer[] = [];
  let bytes = 0;
  let scheduled = false;

  const flush = (): void => {
    scheduled = false;
    if (pending.length === 0) return;
    const chunk = pending.length === 1 ? pending[0]! : Buffer.concat(pending, bytes);
    pending = [];
    bytes = 0;
    if (!stream.destroyed && !stream.writableEnded) write(chunk);
  };

  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (rest.length > 0 || !Buffer.isBuffer(chunk)) {
      flush();
      return write(chunk, ...rest);
    }
    pending.push(chunk);
    bytes += chunk.length;
    if (!scheduled) {
      scheduled = true;
      process.nextTick(flush);
    }
    return !stream.writableNeedDrain;
  }) as typeof stream.write;

  stream.end = ((...args: unknown[]) => {
    flush();
    return end(...args);
  }) as typeof stream.end;
}
