import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../server/src/auth/totp.js';
import { createUser, enableTwoFactor, errorCode, loginBody, setCookies, TestClock } from './support/auth.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const SECURE_COOKIE = '__Host-stellwerk_session';
const CSRF = { 'x-requested-with': 'stellwerk' };

const clock = new TestClock();
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ clock: clock.now, env: { STELLWERK_SESSION_TTL_SECONDS: '7200' } });
  await createUser(t, 'eve@stellwerk.test');
  await createUser(t, 'fay@stellwerk.test', { role: 'AccountReader' });
});
afterAll(() => t.close());

function consoleLogin(email: string, cookie?: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    headers: { ...CSRF, ...(cookie ? { cookie: `${SECURE_COOKIE}=${cookie}` } : {}) },
    payload: loginBody(email),
  });
}

const sessionCookie = (response: LightMyRequestResponse) => {
  const cookie = setCookies(response).find((c) => c.name === SECURE_COOKIE);
  if (!cookie) throw new Error(`no session cookie in ${JSON.stringify(response.headers['set-cookie'])}`);
  return cookie;
};

const currentUser = (cookie: string) =>
  t.app.inject({ url: '/api/v1/user', headers: { cookie: `${SECURE_COOKIE}=${cookie}` } });

describe('console cookie session', () => {
  it('sets a __Host- cookie that is Secure, HttpOnly, SameSite=Lax, Path=/ and has no Domain', async () => {
    const response = await consoleLogin('eve@stellwerk.test');
    expect(response.statusCode).toBe(200);
    const cookie = sessionCookie(response);
    expect(cookie.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookie.attributes).toMatchObject({
      secure: true,
      httponly: true,
      samesite: 'Lax',
      path: '/',
      'max-age': '7200',
    });
    expect(cookie.attributes.domain).toBeUndefined();
    // The token travels only in the HttpOnly cookie.
    const body = response.json<Record<string, unknown>>();
    expect(body.token).toBeUndefined();
    expect(body).toMatchObject({ user: { email: 'eve@stellwerk.test' } });
  });

  it('serves the user object on GET /api/v1/user', async () => {
    const cookie = sessionCookie(await consoleLogin('fay@stellwerk.test')).value;
    const response = await currentUser(cookie);
    expect(response.statusCode).toBe(200);
    const { id, ...rest } = response.json<{ id: string }>();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(rest).toEqual({
      accountId: t.rootAccountId,
      email: 'fay@stellwerk.test',
      name: 'fay',
      locale: 'en',
      twoFactorEnabled: false,
      permissions: ['all.read'],
      accountTitle: 'Stellwerk',
      mandatoryTwoFactor: false,
      accountTimeZone: 'UTC',
      uiSettings: {},
    });
    const anonymous = await t.app.inject({ url: '/api/v1/user' });
    expect(anonymous.statusCode).toBe(401);
    expect(errorCode(anonymous)).toBe('INVALID_TOKEN');
  });

  it('rotates the session id at login and revokes the session presented at login', async () => {
    const first = sessionCookie(await consoleLogin('eve@stellwerk.test')).value;
    expect((await currentUser(first)).statusCode).toBe(200);
    const second = sessionCookie(await consoleLogin('eve@stellwerk.test', first)).value;
    expect(second).not.toBe(first);
    expect((await currentUser(second)).statusCode).toBe(200);
    const old = await currentUser(first);
    expect(old.statusCode).toBe(401);
    expect(errorCode(old)).toBe('INVALID_TOKEN');
  });

  it('logout revokes the session server-side and clears the cookie', async () => {
    const cookie = sessionCookie(await consoleLogin('eve@stellwerk.test')).value;
    const logout = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: { ...CSRF, cookie: `${SECURE_COOKIE}=${cookie}` },
    });
    expect(logout.statusCode).toBe(204);
    const cleared = sessionCookie(logout);
    expect(cleared.value).toBe('');
    expect(cleared.attributes).toMatchObject({ secure: true, path: '/' });
    expect(new Date(String(cleared.attributes.expires)).getTime()).toBeLessThan(Date.now());
    // Replaying the old cookie (a browser that ignored the clearing) is refused.
    expect((await currentUser(cookie)).statusCode).toBe(401);
  });

  it('expires console sessions after STELLWERK_SESSION_TTL_SECONDS', async () => {
    const cookie = sessionCookie(await consoleLogin('eve@stellwerk.test')).value;
    clock.advance(7201_000);
    expect(errorCode(await currentUser(cookie))).toBe('INVALID_TOKEN');
  });

  it('issues a new session id after 2FA activation and revokes the old one', async () => {
    await createUser(t, 'gus@stellwerk.test');
    const old = sessionCookie(await consoleLogin('gus@stellwerk.test')).value;
    const headers = { ...CSRF, cookie: `${SECURE_COOKIE}=${old}` };
    const { secret, activation } = await enableTwoFactor(t, clock, headers, '/api/v1/user/2fa');
    const rotated = sessionCookie(activation).value;
    expect(rotated).not.toBe(old);
    expect(errorCode(await currentUser(old))).toBe('INVALID_TOKEN');
    const now = await currentUser(rotated);
    expect(now.statusCode).toBe(200);
    expect(now.json()).toMatchObject({ twoFactorEnabled: true });

    // The console login with 2FA needs the code as well.
    const without = await consoleLogin('gus@stellwerk.test');
    expect(errorCode(without)).toBe('TWO_FACTOR_REQUIRED');
    expect(setCookies(without)).toEqual([]);
    clock.advance(30_000);
    const withCode = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: CSRF,
      payload: loginBody('gus@stellwerk.test', { otp: await totpCode(secret, clock.now()) }),
    });
    expect(withCode.statusCode).toBe(200);
    expect(sessionCookie(withCode).value).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('CSRF protection of state-changing /api requests', () => {
  it('refuses a cookie-authenticated POST without X-Requested-With or a same-origin Origin', async () => {
    const cookie = sessionCookie(await consoleLogin('eve@stellwerk.test')).value;
    const forged = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: { cookie: `${SECURE_COOKIE}=${cookie}`, origin: 'https://evil.example' },
    });
    expect(forged.statusCode).toBe(403);
    expect(errorCode(forged)).toBe('CSRF_CHECK_FAILED');
    expect((await currentUser(cookie)).statusCode).toBe(200);

    const sameOrigin = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: { cookie: `${SECURE_COOKIE}=${cookie}`, origin: new URL(t.config.publicUrl).origin },
    });
    expect(sameOrigin.statusCode).toBe(204);
  });

  it('guards the login itself (login CSRF) but not safe methods', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: loginBody('eve@stellwerk.test'),
    });
    expect(response.statusCode).toBe(403);
    expect(errorCode(response)).toBe('CSRF_CHECK_FAILED');
    expect((await t.app.inject({ url: '/api/v1/onboarding' })).statusCode).toBe(200);
    const unknown = await t.app.inject({ method: 'POST', url: '/api/v1/no-such-route' });
    expect(unknown.statusCode).toBe(404);
  });
});

describe('the default public URL, console reached from another machine', () => {
  const loginAt = (host: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { ...CSRF, host },
      payload: loginBody('eve@stellwerk.test'),
    });

  it('gives a browser on plain http under a non-loopback name a cookie it keeps, and loopback the Secure one', async () => {
    const [remote] = setCookies(await loginAt('stellwerk.plant.example:8080'));
    expect(remote?.name).toBe('stellwerk_session');
    expect(remote?.attributes.secure).toBeUndefined();
    expect(remote?.attributes).toMatchObject({ httponly: true, samesite: 'Lax', path: '/' });
    const me = await t.app.inject({
      url: '/api/v1/user',
      headers: { host: 'stellwerk.plant.example:8080', cookie: `stellwerk_session=${remote?.value}` },
    });
    expect(me.statusCode).toBe(200);
    for (const host of ['localhost:8080', '127.0.0.1:8080', '[::1]:8080', 'console.localhost:8080']) {
      const [local] = setCookies(await loginAt(host));
      expect(local?.name, host).toBe(SECURE_COOKIE);
      expect(local?.attributes.secure, host).toBe(true);
    }
  });
});

describe('plain-http public URL', () => {
  it('falls back to an unprefixed cookie without Secure, which still authenticates', async () => {
    const plain = await createTestApp({
      env: { STELLWERK_PUBLIC_URL: 'http://stellwerk.plant.example:8080' },
    });
    try {
      await createUser(plain, 'hal@stellwerk.test');
      const response = await plain.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        headers: CSRF,
        payload: loginBody('hal@stellwerk.test'),
      });
      const [cookie] = setCookies(response);
      expect(cookie?.name).toBe('stellwerk_session');
      expect(cookie?.attributes.secure).toBeUndefined();
      expect(cookie?.attributes).toMatchObject({ httponly: true, samesite: 'Lax', path: '/' });
      const me = await plain.app.inject({
        url: '/api/v1/user',
        headers: { cookie: `stellwerk_session=${cookie?.value}` },
      });
      expect(me.statusCode).toBe(200);
    } finally {
      await plain.close();
    }
  });
});
