import { describe, expect, it } from 'vitest';
import { matchTotp, newTotpSecret, totpCode, totpStep, totpUrl } from './totp.js';

const secret = newTotpSecret();
const at = new Date('2031-05-06T07:08:15Z');
const step = totpStep(at);
const shifted = (steps: number) => new Date(at.getTime() + steps * 30_000);

describe('totp', () => {
  it('makes 20-byte Base32 seeds and six-digit codes', async () => {
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(await totpCode(secret, at)).toMatch(/^[0-9]{6}$/);
  });

  it('matches the current step and one step either side, not two', async () => {
    expect(await matchTotp(secret, await totpCode(secret, at), at)).toBe(step);
    expect(await matchTotp(secret, await totpCode(secret, shifted(-1)), at)).toBe(step - 1);
    expect(await matchTotp(secret, await totpCode(secret, shifted(1)), at)).toBe(step + 1);
    expect(await matchTotp(secret, await totpCode(secret, shifted(-2)), at)).toBeNull();
    expect(await matchTotp(secret, await totpCode(secret, shifted(2)), at)).toBeNull();
  });

  it('refuses codes of steps at or before the last used one', async () => {
    const code = await totpCode(secret, at);
    expect(await matchTotp(secret, code, at, step)).toBeNull();
    expect(await matchTotp(secret, code, at, step - 1)).toBe(step);
    // A stored step ahead of the clock (clock set back) refuses instead of throwing.
    expect(await matchTotp(secret, code, at, step + 100)).toBeNull();
  });

  it('refuses malformed codes and codes of another seed', async () => {
    expect(await matchTotp(secret, '12345', at)).toBeNull();
    expect(await matchTotp(secret, 'abcdef', at)).toBeNull();
    expect(await matchTotp(newTotpSecret(), await totpCode(secret, at), at)).toBeNull();
  });

  it('builds an otpauth URL with issuer, SHA-1, 6 digits and 30 s', () => {
    const url = new URL(totpUrl(secret, 'ann@example.com'));
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(url.searchParams.get('secret')).toBe(secret);
    expect(url.searchParams.get('issuer')).toBe('Stellwerk');
    for (const [name, value] of [
      ['algorithm', 'SHA1'],
      ['digits', '6'],
      ['period', '30'],
    ]) {
      const got = url.searchParams.get(name!);
      if (got !== null) expect(got.toUpperCase()).toBe(value);
    }
  });
});
