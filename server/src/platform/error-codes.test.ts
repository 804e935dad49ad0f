import { describe, expect, it } from 'vitest';
import { ERROR_CODES, NO_PERMISSION_PREFIX } from './error-codes.js';

describe('error-code catalogue', () => {
  it('lists each code once, in order, in upper snake case', () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    expect([...ERROR_CODES].sort()).toEqual([...ERROR_CODES]);
    expect(ERROR_CODES.filter((code) => !/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/.test(code))).toEqual([]);
  });

  it('keeps the NO_PERMISSION family out of the list of single codes', () => {
    expect(ERROR_CODES.filter((code) => code.startsWith(NO_PERMISSION_PREFIX))).toEqual([]);
  });
});
