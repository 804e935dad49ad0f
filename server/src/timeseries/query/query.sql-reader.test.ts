import { describe, expect, it } from 'vitest';
import { numberedPlaceholders } from './query.sql-reader.js';

describe('numberedPlaceholders', () => {
  it('numbers placeholders in order and spreads a list over as many', () => {
    expect(numberedPlaceholders('a = ? AND b IN (?) AND c = ?', [1, ['x', 'y', 'z'], 2])).toEqual({
      text: 'a = $1 AND b IN ($2, $3, $4) AND c = $5',
      values: [1, 'x', 'y', 'z', 2],
    });
  });

  it('refuses a count mismatch and an empty list instead of sending a wrong statement', () => {
    expect(() => numberedPlaceholders('a = ? AND b = ?', [1])).toThrow(/placeholders/);
    expect(() => numberedPlaceholders('a = ?', [1, 2])).toThrow(/bound values/);
    expect(() => numberedPlaceholders('a IN (?)', [[]])).toThrow(/empty list/);
  });
});
