import type { LightMyRequestResponse } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createUser, errorCode } from './support/auth.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const LIMIT = 5;
const WINDOW_MS = 2000;
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({
    env: { STELLWERK_RATE_LIMIT_MAX: String(LIMIT), STELLWERK_RATE_LIMIT_WINDOW_MS: String(WINDOW_MS) },
  });
  await createUser(t, 'max@stellwerk.test');
  await createUser(t, 'ned@stellwerk.test');
});
afterAll(() => t.close());

const call = (token: string, ip = '10.9.0.1') =>
  t.app.inject({ url: '/api/v1/user', headers: { authorization: `Bearer ${token}` }, remoteAddress: ip });

function expectLimited(response: LightMyRequestResponse): void {
  expect(response.statusCode).toBe(429);
  const { error } = response.json<{
    error: { code: string; message: string; details: { retryAfterSeconds: number }[] };
  }>();
  expect(error.code).toBe('API_LIMIT_REACHED');
  expect(error.message).toMatch(/limit/i);
  const retryAfter = Number(response.headers['retry-after']);
  expect(error.details).toEqual([{ retryAfterSeconds: retryAfter }]);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(Math.ceil(WINDOW_MS / 1000));
}

describe('API rate limit', () => {
  it('answers 429 API_LIMIT_REACHED with Retry-After, again on immediate retry; others unaffected; recovers', async () => {
    // Logins come from their own addresses so they do not use up the limited client's budget.
    const limited = await bearer(t, 'max@stellwerk.test', { ip: '10.9.1.1' });
    const other = await bearer(t, 'ned@stellwerk.test', { ip: '10.9.1.2' });

    const statuses: number[] = [];
    for (let i = 0; i < LIMIT; i++) statuses.push((await call(limited)).statusCode);
    expect(statuses).toEqual(Array(LIMIT).fill(200));
    const over = await call(limited);
    expectLimited(over);
    const retry = await call(limited);
    expectLimited(retry);
    expect(errorCode(retry)).not.toBe('INVALID_TOKEN');

    expect((await call(other, '10.9.0.2')).statusCode).toBe(200);

    let recovered: LightMyRequestResponse | undefined;
    for (let attempt = 0; attempt < 30 && recovered?.statusCode !== 200; attempt++) {
      await sleep(250);
      recovered = await call(limited);
    }
    expect(recovered?.statusCode).toBe(200);
  });

  it('limits a client with a bad token by its address: after the limit it gets 429, never INVALID_TOKEN', async () => {
    const bogus = 'not-a-valid-token-at-all';
    const codes: (string | undefined)[] = [];
    for (let i = 0; i < LIMIT; i++) codes.push(errorCode(await call(bogus, '10.9.0.3')));
    expect(codes).toEqual(Array(LIMIT).fill('INVALID_TOKEN'));
    expectLimited(await call(bogus, '10.9.0.3'));
    const retry = await call(bogus, '10.9.0.3');
    expectLimited(retry);
  });

  it('stops a client that sends a fresh invalid token each time, before its tokens reach the database', async () => {
    const small = await createTestApp({
      env: { STELLWERK_AUTH_FAILURES_PER_ADDRESS: '4', STELLWERK_RATE_LIMIT_WINDOW_MS: String(WINDOW_MS) },
    });
    try {
      const attempt = (ip: string) =>
        small.app.inject({
          url: '/api/v1/user',
          headers: { authorization: `Bearer random-${Math.random()}` },
          remoteAddress: ip,
        });
      const codes: (string | undefined)[] = [];
      for (let i = 0; i < 4; i++) codes.push(errorCode(await attempt('10.9.5.1')));
      expect(codes).toEqual(Array(4).fill('INVALID_TOKEN'));
      const blocked = await attempt('10.9.5.1');
      expect(blocked.statusCode).toBe(429);
      expect(errorCode(blocked)).toBe('API_LIMIT_REACHED');
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(errorCode(await attempt('10.9.5.2'))).toBe('INVALID_TOKEN');
    } finally {
      await small.close();
    }
  });
});
