import { describe, expect, it } from 'vitest';
import { chooseEncoding, isCompressible } from './compression.js';

describe('chooseEncoding', () => {
  it('prefers brotli, falls back to gzip, and honours q=0 and *', () => {
    expect(chooseEncoding('gzip, deflate, br, zstd')).toBe('br');
    expect(chooseEncoding('gzip, deflate')).toBe('gzip');
    expect(chooseEncoding('br;q=0, gzip;q=0.5')).toBe('gzip');
    expect(chooseEncoding('BR;Q=0.1')).toBe('br');
    expect(chooseEncoding('*')).toBe('br');
    expect(chooseEncoding('*;q=0, gzip')).toBe('gzip');
    expect(chooseEncoding('identity')).toBeNull();
    expect(chooseEncoding('gzip;q=0, br;q=0')).toBeNull();
    expect(chooseEncoding(undefined)).toBeNull();
  });
});

describe('isCompressible', () => {
  it('takes text and structured formats, never event streams or already compressed media', () => {
    for (const type of [
      'application/json; charset=utf-8',
      'text/html; charset=utf-8',
      'text/javascript; charset=utf-8',
      'text/csv; charset=utf-8',
      'text/plain; version=0.0.4; charset=utf-8',
      'application/problem+json',
      'application/geo+json; charset=utf-8',
      'image/svg+xml',
    ])
      expect(isCompressible(type), type).toBe(true);
    for (const type of [
      'text/event-stream',
      'image/png',
      'font/woff2',
      'application/octet-stream',
      'application/vnd.pmtiles',
      'application/gzip',
      'application/x-protobuf',
    ])
      expect(isCompressible(type), type).toBe(false);
  });
});
