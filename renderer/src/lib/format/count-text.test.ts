import { describe, expect, it } from 'vitest';
import { countText } from './count-text';

describe('countText', () => {
  it('takes the first part for one and the second for any other count', () => {
    expect(countText('{count} state|{count} states', 1)).toBe('1 state');
    expect(countText('{count} state|{count} states', 0)).toBe('0 states');
    expect(countText('{count} state|{count} states', 12)).toBe('12 states');
  });

  it('uses a text without a second part for every count', () => {
    expect(countText('{count} × seen', 3)).toBe('3 × seen');
  });
});
