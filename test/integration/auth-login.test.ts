import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthHousekeeping } from '../../server/src/auth/auth-housekeeping.js';
import { User } from '../../server/src/users/user.entity.js';
import { bearer, createUser, errorCode, login, TestClock, USER_PASSWORD } from './support/auth.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const clock = new TestClock();
let t: TestApp;

const MAX_FAILURES = 3;
const PER_CLIENT = 5;
const LOCK_MS = 60_000;

beforeAll(async () => {
  t = await createTestApp({
    clock: clock.now,
    env: {
      STELLWERK_LOGIN_MAX_FAILURES: String(MAX_FAILURES),
      STELLWERK_LOGIN_MAX_FAILURES_PER_CLIENT: String(PER_CLIENT),
      STELLWERK_LOGIN_LOCK_MS: String(LOCK_MS),
      STELLWERK_TOKEN_TTL_SECONDS: '3600',
    },
  });
  await createUser(t, 'ada@stellwerk.test');
  await createUser(t, 'bob@stellwerk.test');
  await createUser(t, 'cyd@stellwerk.test');
  await createUser(t, 'dee@stellwerk.test');
  await createUser(t, 'eli@stellwerk.test');
  for (const name of ['gone', 'left']) {
    const user = await createUser(t, `${name}@stellwerk.test`);
    await t.withContext(() => t.orm.em.nativeUpdate(User, { id: user.id }, { active: false }));
  }
});
afterAll(() => t.close());

const me = (token: string) =>
  t.app.inject({ url: '/api/v1/user', headers: { authorization: `Bearer ${token}` } });

/** CPU time of this process (all threads, argon2's included): unlike wall time, other load on the machine does not inflate it. */
async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = process.cpuUsage();
  const value = await fn();
  const used = process.cpuUsage(start);
  return { ms: (used.user + used.system) / 1000, value };
}

describe('password login', () => {
  it('returns a bearer token with its expiry and the user', async () => {
    const response = await login(t, 'ada@stellwerk.test', { ip: '10.0.0.1' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const body = response.json<{
      token: string;
      expiresAt: string;
      user: { email: string; permissions: string[] };
    }>();
    expect(body.user.email).toBe('ada@stellwerk.test');
    expect(body.user.permissions).toContain('all.manage');
    const ttlMs = new Date(body.expiresAt).getTime() - clock.now().getTime();
    expect(ttlMs).toBeGreaterThan(3590_000);
    expect(ttlMs).toBeLessThanOrEqual(3600_000);
    expect((await me(body.token)).statusCode).toBe(200);
  });

  it('answers unknown users, wrong passwords and deactivated users identically, at similar cost', async () => {
    // Two attempts per address stay below the per-account limit of three.
    const attempts: Record<string, (() => Promise<LightMyRequestResponse>)[]> = {
      unknown: [1, 2, 3, 4].map((i) => () => login(t, `nobody${i}@stellwerk.test`, { ip: '10.0.1.1' })),
      wrongPassword: ['bob', 'bob', 'eli', 'eli'].map(
        (name) => () =>
          login(t, `${name}@stellwerk.test`, { ip: '10.0.1.2', password: 'not the password at all' }),
      ),
      deactivated: ['gone', 'gone', 'left', 'left'].map(
        (name) => () => login(t, `${name}@stellwerk.test`, { ip: '10.0.1.3' }),
      ),
    };
    const fastest: Record<string, number> = {};
    const bodies = new Set<string>();
    for (let round = 0; round < 4; round++) {
      for (const [name, list] of Object.entries(attempts)) {
        const { ms, value } = await timed(list[round]!);
        expect(value.statusCode).toBe(401);
        bodies.add(value.body);
        fastest[name] = Math.min(fastest[name] ?? Infinity, ms);
      }
    }
    expect([...bodies]).toEqual([
      JSON.stringify({
        error: { code: 'INVALID_CREDENTIALS', message: 'Invalid e-mail or password', details: [] },
      }),
    ]);
    // Every path runs one argon2id verification: compare the cheapest run of each (CPU time; a path
    // without the argon2 check would cost a tenth).
    const times = Object.values(fastest);
    expect(Math.max(...times) / Math.min(...times), JSON.stringify(fastest)).toBeLessThan(1.5);
  });

  it('revokes the bearer token at logout: later use answers 401 INVALID_TOKEN', async () => {
    const token = await bearer(t, 'ada@stellwerk.test', { ip: '10.0.0.2' });
    const logout = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/auth/logout',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(logout.statusCode).toBe(204);
    const after = await me(token);
    expect(after.statusCode).toBe(401);
    expect(errorCode(after)).toBe('INVALID_TOKEN');
    const again = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/auth/logout',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(errorCode(again)).toBe('INVALID_TOKEN');
  });

  it('expires bearer tokens after STELLWERK_TOKEN_TTL_SECONDS (injected clock)', async () => {
    const token = await bearer(t, 'ada@stellwerk.test', { ip: '10.0.0.3' });
    clock.advance(3590_000);
    expect((await me(token)).statusCode).toBe(200);
    clock.advance(11_000);
    const expired = await me(token);
    expect(expired.statusCode).toBe(401);
    expect(errorCode(expired)).toBe('INVALID_TOKEN');
  });
});

describe('login throttling (PostgreSQL-backed)', () => {
  it('locks a known and an unknown e-mail alike after too many failures, with Retry-After', async () => {
    const locked: Record<string, { status: number; body: string; retryAfter: unknown }> = {};
    for (const email of ['cyd@stellwerk.test', 'ghost@stellwerk.test']) {
      for (let i = 0; i < MAX_FAILURES; i++) {
        const failed = await login(t, email, { ip: `10.1.0.${i}`, password: 'wrong password here' });
        expect(errorCode(failed)).toBe('INVALID_CREDENTIALS');
      }
      // Even the right password is refused now, from yet another address.
      const response = await login(t, email, { ip: '10.1.1.1' });
      locked[email] = {
        status: response.statusCode,
        body: response.body,
        retryAfter: response.headers['retry-after'],
      };
    }
    const known = locked['cyd@stellwerk.test']!;
    const unknown = locked['ghost@stellwerk.test']!;
    expect(known.status).toBe(429);
    expect((JSON.parse(known.body) as { error: { code: string } }).error.code).toBe('LOGIN_THROTTLED');
    expect(Number(known.retryAfter)).toBeGreaterThan(0);
    expect(Number(known.retryAfter)).toBeLessThanOrEqual(LOCK_MS / 1000);
    expect(unknown).toEqual(known);

    clock.advance(LOCK_MS + 1000);
    expect((await login(t, 'cyd@stellwerk.test', { ip: '10.1.1.2' })).statusCode).toBe(200);
  });

  it('resets the e-mail counter after a successful login', async () => {
    const fail = () => login(t, 'dee@stellwerk.test', { ip: '10.2.0.1', password: 'wrong password here' });
    for (let i = 0; i < MAX_FAILURES - 1; i++) expect((await fail()).statusCode).toBe(401);
    expect((await login(t, 'dee@stellwerk.test', { ip: '10.2.0.2' })).statusCode).toBe(200);
    for (let i = 0; i < MAX_FAILURES - 1; i++) expect((await fail()).statusCode).toBe(401);
    expect((await login(t, 'dee@stellwerk.test', { ip: '10.2.0.3' })).statusCode).toBe(200);
  });

  it('locks a client address that fails across many e-mails; other clients are unaffected', async () => {
    const ip = '10.3.0.1';
    for (let i = 0; i < PER_CLIENT; i++) {
      const failed = await login(t, `spray${i}@stellwerk.test`, { ip, password: 'wrong password here' });
      expect(failed.statusCode).toBe(401);
    }
    const blocked = await login(t, 'bob@stellwerk.test', { ip });
    expect(blocked.statusCode).toBe(429);
    expect(errorCode(blocked)).toBe('LOGIN_THROTTLED');
    expect(blocked.headers['retry-after']).toBeDefined();
    expect((await login(t, 'bob@stellwerk.test', { ip: '10.3.0.2' })).statusCode).toBe(200);
  });

  it('keeps the counters in the shared login_throttle table', async () => {
    const rows = await t.withContext(() =>
      t.orm.em
        .getConnection()
        .execute<{ key: string }[]>(`SELECT key FROM login_throttle WHERE key = ?`, ['ip:10.3.0.1']),
    );
    expect(rows).toHaveLength(1);
  });
});

describe('login input', () => {
  it('answers a malformed body with 400 VALIDATION_ERROR', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/auth/login',
      payload: { email: 'ada@stellwerk.test', password: USER_PASSWORD, otp: '12ab56' },
    });
    expect(response.statusCode).toBe(400);
    expect(errorCode(response)).toBe('VALIDATION_ERROR');
  });
});

describe('housekeeping', () => {
  it('purges sessions dead for a day and login counters whose window and lock are over', async () => {
    const count = (table: string) =>
      t.withContext(async () => {
        const [row] = await t.orm.em
          .getConnection()
          .execute<{ n: string }[]>(`SELECT count(*) AS n FROM ${table}`);
        return Number(row!.n);
      });
    expect(await count('sessions')).toBeGreaterThan(0);
    expect(await count('login_throttle')).toBeGreaterThan(0);
    const live = await bearer(t, 'bob@stellwerk.test', { ip: '10.4.0.1' });
    clock.advance(2 * 86_400_000);
    const fresh = await bearer(t, 'bob@stellwerk.test', { ip: '10.4.0.2' });
    await new AuthHousekeeping(t.orm, t.app.log, t.services.sessions, t.services.loginThrottle).run();
    expect(await count('sessions')).toBe(1);
    expect(await count('login_throttle')).toBe(0);
    expect(errorCode(await me(live))).toBe('INVALID_TOKEN');
    expect((await me(fresh)).statusCode).toBe(200);
  });
});
