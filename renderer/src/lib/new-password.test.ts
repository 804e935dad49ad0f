import { describe, expect, it } from 'vitest';
import { passwordsDiffer } from './new-password';

describe('passwordsDiffer', () => {
  it('says nothing while the repetition is empty, and whether it differs once typed', () => {
    expect(passwordsDiffer('a long password', '')).toBe(false);
    expect(passwordsDiffer('a long password', 'a long')).toBe(true);
    expect(passwordsDiffer('a long password', 'a long password')).toBe(false);
  });
});
