import { describe, expect, it } from 'vitest';
import { keepNewest } from './keep-newest.js';

describe('keepNewest', () => {
  it('keeps the newest entries up to the bound, a key set again counting as new', () => {
    const map = new Map<string, number>();
    for (const [key, value] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
      ['a', 4],
      ['d', 5],
    ] as const)
      keepNewest(map, key, value, 3);
    expect([...map]).toEqual([
      ['c', 3],
      ['a', 4],
      ['d', 5],
    ]);
  });
});
