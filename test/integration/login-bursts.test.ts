import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, errorCode, login, TestClock } from './support/auth.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Concurrent wrong-password bursts: each attempt takes its place in the budgets before its password
 * is checked, so however many arrive at once, at most the maximum are checked and the rest answer
 * LOGIN_THROTTLED unchecked. Every 401 INVALID_CREDENTIALS is one password checked.
 */

const MAX_FAILURES = 10;
const PER_CLIENT = 20;
const BURST = 40;
const clock = new TestClock();
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({
    clock: clock.now,
    env: {
      STELLWERK_LOGIN_MAX_FAILURES: String(MAX_FAILURES),
      STELLWERK_LOGIN_MAX_FAILURES_PER_CLIENT: String(PER_CLIENT),
      STELLWERK_LOGIN_LOCK_MS: '60000',
    },
  });
  for (const name of ['kim', 'kai', 'kit']) await createUser(t, `${name}@stellwerk.test`);
});
afterAll(() => t?.close());

const WRONG = 'wrong password here';

function tally(responses: LightMyRequestResponse[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const response of responses) {
    const key = `${response.statusCode} ${errorCode(response) ?? ''}`.trim();
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

describe('concurrent login bursts', () => {
  it('check at most the per-account maximum of passwords, from however many addresses', async () => {
    const responses = await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        login(t, 'kim@stellwerk.test', { ip: `10.40.0.${i + 1}`, password: WRONG }),
      ),
    );
    expect(tally(responses)).toEqual({
      '401 INVALID_CREDENTIALS': MAX_FAILURES,
      '429 LOGIN_THROTTLED': BURST - MAX_FAILURES,
    });
    // Locked: even the right password is refused, unchecked.
    const right = await login(t, 'kim@stellwerk.test', { ip: '10.40.1.1' });
    expect(errorCode(right)).toBe('LOGIN_THROTTLED');
    expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('check at most the per-client maximum of passwords across many accounts', async () => {
    const responses = await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        login(t, `spray-${i}@stellwerk.test`, { ip: '10.41.0.1', password: WRONG }),
      ),
    );
    expect(tally(responses)).toEqual({
      '401 INVALID_CREDENTIALS': PER_CLIENT,
      '429 LOGIN_THROTTLED': BURST - PER_CLIENT,
    });
    expect(errorCode(await login(t, 'kai@stellwerk.test', { ip: '10.41.0.1' }))).toBe('LOGIN_THROTTLED');
    expect((await login(t, 'kai@stellwerk.test', { ip: '10.41.0.2' })).statusCode).toBe(200);
  });

  it('do not lock an account whose right password arrives many times at once', async () => {
    const responses = await Promise.all(
      Array.from({ length: MAX_FAILURES }, (_, i) =>
        login(t, 'kit@stellwerk.test', { ip: `10.42.0.${i + 1}` }),
      ),
    );
    expect(tally(responses)).toEqual({ '200': MAX_FAILURES });
    // Their places are given back: a full budget of failures is still allowed afterwards.
    const failures = [];
    for (let i = 0; i < MAX_FAILURES; i++)
      failures.push(await login(t, 'kit@stellwerk.test', { ip: '10.42.1.1', password: WRONG }));
    expect(tally(failures)).toEqual({ '401 INVALID_CREDENTIALS': MAX_FAILURES });
    expect(errorCode(await login(t, 'kit@stellwerk.test', { ip: '10.42.1.2' }))).toBe('LOGIN_THROTTLED');
  });
});
