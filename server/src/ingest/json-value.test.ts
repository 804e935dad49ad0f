import { describe, expect, it } from 'vitest';
import { rawText, toJsonValue } from './json-value.js';

describe('toJsonValue', () => {
  it('turns what jsonb cannot hold into plain JSON', () => {
    const value = toJsonValue({
      big: 2n ** 70n,
      small: 42n,
      bytes: Uint8Array.from([1, 2, 255]),
      when: new Date('2026-01-02T03:04:05Z'),
      map: new Map<unknown, unknown>([[1, 'a']]),
      nan: NaN,
      inf: -Infinity,
      nul: 'a\0b',
      'k\0ey': 1,
      gone: undefined,
      fn: () => 1,
      list: [undefined, 1],
    });
    expect(value).toEqual({
      big: '1180591620717411303424',
      small: 42,
      bytes: 'AQL/',
      when: '2026-01-02T03:04:05.000Z',
      map: { 1: 'a' },
      nan: null,
      inf: null,
      nul: 'ab',
      key: 1,
      list: [null, 1],
    });
    expect(() => JSON.stringify(value)).not.toThrow();
  });

  it('cuts off absurdly deep nesting instead of overflowing the stack', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = { deep };
    expect(JSON.stringify(toJsonValue(deep)).length).toBeLessThan(1000);
  });
});

describe('rawText', () => {
  it('keeps text as text and binary as base64', () => {
    expect(rawText(Buffer.from('{"a":"ä"}\n'))).toBe('{"a":"ä"}\n');
    expect(rawText(Buffer.from([0xc3, 0x28]))).toBe(Buffer.from([0xc3, 0x28]).toString('base64'));
    expect(rawText(Buffer.from([0x41, 0x00, 0x42]))).toBe('QQBC');
  });
});
