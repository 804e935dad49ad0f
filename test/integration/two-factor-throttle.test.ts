import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../server/src/auth/totp.js';
import {
  bearer,
  createUser,
  enableTwoFactor,
  errorCode,
  login,
  nextCode,
  TestClock,
} from './support/auth.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Every check of a two-factor code is throttled like a password: per account and per client
 * address, reserved before the check, so concurrent guesses get no more tries than sequential
 * ones. Login, activation and deactivation share the account's budget.
 */

const MAX_FAILURES = 3;
const BURST = 9;
const clock = new TestClock();
let t: TestApp;
let users = 0;

beforeAll(async () => {
  t = await createTestApp({
    clock: clock.now,
    env: {
      STELLWERK_LOGIN_MAX_FAILURES: String(MAX_FAILURES),
      STELLWERK_LOGIN_MAX_FAILURES_PER_CLIENT: '1000',
      STELLWERK_LOGIN_LOCK_MS: '60000',
    },
  });
});
afterAll(() => t?.close());

/** A fresh user signed in with a bearer token (console base: plus the CSRF header). */
async function freshUser(): Promise<{ email: string; headers: Record<string, string> }> {
  const email = `coder-${++users}@stellwerk.test`;
  await createUser(t, email);
  const token = await bearer(t, email);
  return { email, headers: { authorization: `Bearer ${token}`, 'x-requested-with': 'test' } };
}

function tally(responses: LightMyRequestResponse[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const response of responses) {
    const key = `${response.statusCode} ${errorCode(response) ?? ''}`.trim();
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

const burst = (send: () => Promise<LightMyRequestResponse>) =>
  Promise.all(Array.from({ length: BURST }, send));

const WRONG_OTP = '000000';
const WRONG_RECOVERY = 'aaaaa-aaaaa';

describe.each(['/xapi/v1/users/me/2fa', '/api/v1/user/2fa'])('2FA codes at %s', (base) => {
  it('deactivation checks at most the maximum of wrong codes, then refuses even the right one', async () => {
    const { headers } = await freshUser();
    const { secret } = await enableTwoFactor(t, clock, headers, base);
    const responses = await burst(() =>
      t.app.inject({ method: 'DELETE', url: base, headers, payload: { otp: WRONG_OTP } }),
    );
    expect(tally(responses)).toEqual({
      '422 INVALID_TWO_FACTOR_CODE': MAX_FAILURES,
      '429 LOGIN_THROTTLED': BURST - MAX_FAILURES,
    });
    const right = await t.app.inject({
      method: 'DELETE',
      url: base,
      headers,
      payload: { otp: await nextCode(clock, secret) },
    });
    expect(errorCode(right)).toBe('LOGIN_THROTTLED');
  });

  it('deactivation with recovery codes is throttled alike', async () => {
    const { headers } = await freshUser();
    await enableTwoFactor(t, clock, headers, base);
    const responses = await burst(() =>
      t.app.inject({ method: 'DELETE', url: base, headers, payload: { recoveryCode: WRONG_RECOVERY } }),
    );
    expect(tally(responses)).toEqual({
      '422 INVALID_TWO_FACTOR_CODE': MAX_FAILURES,
      '429 LOGIN_THROTTLED': BURST - MAX_FAILURES,
    });
  });

  it('activation checks at most the maximum of wrong codes', async () => {
    const { headers } = await freshUser();
    const enrolment = await t.app.inject({ method: 'POST', url: base, headers });
    const { secret } = enrolment.json<{ secret: string }>();
    const responses = await burst(() =>
      t.app.inject({ method: 'POST', url: `${base}/activate`, headers, payload: { otp: WRONG_OTP } }),
    );
    expect(tally(responses)).toEqual({
      '422 INVALID_TWO_FACTOR_CODE': MAX_FAILURES,
      '429 LOGIN_THROTTLED': BURST - MAX_FAILURES,
    });
    const right = await t.app.inject({
      method: 'POST',
      url: `${base}/activate`,
      headers,
      payload: { otp: await totpCode(secret, clock.now()) },
    });
    expect(errorCode(right)).toBe('LOGIN_THROTTLED');
  });
});

describe('2FA codes at login', () => {
  it.each([
    ['a one-time code', { otp: WRONG_OTP }],
    ['a recovery code', { recoveryCode: WRONG_RECOVERY }],
  ])('checks at most the maximum of wrong %s after the right password', async (_what, factor) => {
    const { email, headers } = await freshUser();
    await enableTwoFactor(t, clock, headers);
    const responses = await burst(() => login(t, email, factor));
    expect(tally(responses)).toEqual({
      '401 INVALID_TWO_FACTOR_CODE': MAX_FAILURES,
      '429 LOGIN_THROTTLED': BURST - MAX_FAILURES,
    });
  });

  it('shares the account budget with deactivation: wrong codes there lock the login', async () => {
    const { email, headers } = await freshUser();
    const { secret } = await enableTwoFactor(t, clock, headers);
    for (let i = 0; i < MAX_FAILURES; i++) {
      const wrong = await t.app.inject({
        method: 'DELETE',
        url: '/xapi/v1/users/me/2fa',
        headers,
        payload: { otp: WRONG_OTP },
      });
      expect(errorCode(wrong)).toBe('INVALID_TWO_FACTOR_CODE');
    }
    const right = await login(t, email, { otp: await nextCode(clock, secret) });
    expect(errorCode(right)).toBe('LOGIN_THROTTLED');
  });

  it('leaves the budget alone when the right code passes', async () => {
    const { email, headers } = await freshUser();
    const { secret } = await enableTwoFactor(t, clock, headers);
    for (let i = 0; i < MAX_FAILURES + 2; i++) {
      const response = await login(t, email, { otp: await nextCode(clock, secret) });
      expect(response.statusCode, response.body).toBe(200);
    }
  });
});
