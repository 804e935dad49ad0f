import { describe, expect, it } from 'vitest';
import { attachmentDisposition, contentTypeOf, parseRange } from './file-reply.js';

describe('file replies', () => {
  it('parses one byte range; several or malformed ones mean the whole file', () => {
    expect(parseRange('bytes=0-126', 1000)).toEqual({ start: 0, end: 126 });
    expect(parseRange('bytes=990-', 1000)).toEqual({ start: 990, end: 999 });
    expect(parseRange('bytes=990-5000', 1000)).toEqual({ start: 990, end: 999 });
    expect(parseRange('bytes=-10', 1000)).toEqual({ start: 990, end: 999 });
    expect(parseRange('bytes=-5000', 1000)).toEqual({ start: 0, end: 999 });
    expect(parseRange('bytes=1000-1010', 1000)).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', 1000)).toBe('unsatisfiable');
    expect(parseRange('bytes=0-', 0)).toBe('unsatisfiable');
    expect(parseRange('bytes=5-1', 1000)).toBeNull();
    expect(parseRange('bytes=0-1,5-6', 1000)).toBeNull();
    expect(parseRange('items=0-1', 1000)).toBeNull();
    expect(parseRange('bytes=-', 1000)).toBeNull();
  });

  it('names content types by extension, binary when unknown', () => {
    expect(contentTypeOf('/x/site.PMTILES')).toBe('application/vnd.pmtiles');
    expect(contentTypeOf('/x/index.html')).toBe('text/html; charset=utf-8');
    expect(contentTypeOf('/x/a.js')).toBe('text/javascript; charset=utf-8');
    expect(contentTypeOf('/x/secret.key')).toBe('application/octet-stream');
  });
});

describe('attachment disposition', () => {
  it('gives an ASCII name and the UTF-8 one, with quotes and separators kept out of the header', () => {
    expect(attachmentDisposition('Kühlhaus_2026-11-27.csv')).toBe(
      `attachment; filename="Kuhlhaus_2026-11-27.csv"; filename*=UTF-8''K%C3%BChlhaus_2026-11-27.csv`,
    );
    expect(attachmentDisposition('a"b\\c;d.csv')).toBe(
      `attachment; filename="a_b_c;d.csv"; filename*=UTF-8''a%22b%5Cc%3Bd.csv`,
    );
    expect(attachmentDisposition('温度.csv')).toBe(
      `attachment; filename="download.csv"; filename*=UTF-8''%E6%B8%A9%E5%BA%A6.csv`,
    );
  });
});
