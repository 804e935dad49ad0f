import { describe, expect, it } from 'vitest';
import { imageTypeOf, pmtilesProblem, PMTILES_HEADER_BYTES } from './file-signatures.js';

const header = (magic: string, version: number) => {
  const head = Buffer.alloc(PMTILES_HEADER_BYTES);
  head.write(magic, 0, 'latin1');
  head[7] = version;
  return head;
};

describe('file signatures', () => {
  it('accepts a PMTiles v3 header and names what is wrong with others', () => {
    expect(pmtilesProblem(header('PMTiles', 3))).toBeNull();
    expect(pmtilesProblem(header('PMTiles', 2))).toMatch(/version 2/);
    expect(pmtilesProblem(header('SQLite ', 3))).toMatch(/not a PMTiles/);
    expect(pmtilesProblem(header('PMTiles', 3).subarray(0, 100))).toMatch(/shorter/);
  });

  it('recognises PNG, JPEG and WebP and refuses SVG', () => {
    expect(imageTypeOf(Buffer.from('89504e470d0a1a0a0000', 'hex'))).toBe('image/png');
    expect(imageTypeOf(Buffer.from('ffd8ffe000104a464946', 'hex'))).toBe('image/jpeg');
    expect(imageTypeOf(Buffer.from('RIFF\x10\x00\x00\x00WEBPVP8 ', 'latin1'))).toBe('image/webp');
    expect(imageTypeOf(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeNull();
    expect(imageTypeOf(Buffer.from('GIF89a'))).toBeNull();
  });
});
