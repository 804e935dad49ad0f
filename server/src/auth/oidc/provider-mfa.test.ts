import { describe, expect, it } from 'vitest';
import { claimsMultiFactor } from './provider-mfa.js';

describe('claimsMultiFactor', () => {
  it.each([
    [['mfa'], true],
    [['pwd', 'mfa'], true],
    [['MFA'], true],
    [['pwd', 'otp'], true],
    [['pin', 'hwk'], true],
    [['pwd'], false],
    [['otp'], false],
    [['fed'], false],
    [[], false],
    ['mfa', false],
    [undefined, false],
    [[1, null, { mfa: true }], false],
  ])('%j → %s', (amr, expected) => {
    expect(claimsMultiFactor(amr)).toBe(expected);
  });
});
