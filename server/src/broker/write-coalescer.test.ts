import { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { coalesceWrites } from './write-coalescer.js';

/** A duplex that records each chunk its writable side receives. */
function recorder() {
  const chunks: Buffer[] = [];
  const stream = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(Buffer.from(chunk));
      callback();
    },
  });
  return { stream, chunks };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('coalesceWrites', () => {
  it('writes the buffers of one tick as one chunk, in order', async () => {
    const { stream, chunks } = recorder();
    coalesceWrites(stream);
    for (let i = 0; i < 300; i++) expect(stream.write(Buffer.from([0x40, 2, i >> 8, i & 255]))).toBe(true);
    await tick();
    expect(chunks).toHaveLength(1);
    expect(chunks[0]!.length).toBe(1200);
    expect(chunks[0]!.readUInt16BE(1198)).toBe(299);
  });

  it('flushes collected buffers before a string, a write with a callback and end, keeping byte order', async () => {
    const { stream, chunks } = recorder();
    coalesceWrites(stream);
    stream.write(Buffer.from('a'));
    stream.write(Buffer.from('b'));
    stream.write('c', 'utf8');
    stream.write(Buffer.from('d'));
    let called = false;
    stream.write(Buffer.from('e'), () => (called = true));
    stream.write(Buffer.from('f'));
    stream.end(Buffer.from('g'));
    await tick();
    expect(Buffer.concat(chunks).toString()).toBe('abcdefg');
    expect(called).toBe(true);
  });

  it('writes nothing after the stream is destroyed', async () => {
    const { stream, chunks } = recorder();
    coalesceWrites(stream);
    stream.write(Buffer.from('late'));
    stream.destroy();
    await tick();
    expect(chunks).toEqual([]);
  });
});
