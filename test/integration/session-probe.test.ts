import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createUser, errorCode, loginBody, setCookies } from './support/auth.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, type TestApp } from './support/test-app.js';

const SECURE_COOKIE = '__Host-stellwerk_session';
const CSRF = { 'x-requested-with': 'stellwerk' };
const FAILURES = 3;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ env: { STELLWERK_AUTH_FAILURES_PER_ADDRESS: String(FAILURES) } });
  await createUser(t, 'ida@stellwerk.test', { role: 'AccountReader' });
});
afterAll(() => t?.close());

async function consoleCookie(email: string): Promise<string> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/login',
    headers: CSRF,
    payload: loginBody(email),
  });
  const cookie = setCookies(response).find((c) => c.name === SECURE_COOKIE);
  if (!cookie) throw new Error(`no session cookie: ${response.body}`);
  return cookie.value;
}

const probe = (headers: Record<string, string> = {}, remoteAddress = '10.40.0.1') =>
  t.app.inject({ url: '/api/v1/session', headers, remoteAddress });

const withCookie = (value: string) => ({ cookie: `${SECURE_COOKIE}=${value}` });

const clearedCookie = (response: LightMyRequestResponse) =>
  setCookies(response).find((c) => c.name === SECURE_COOKIE && c.value === '');

describe("the console's session probe", () => {
  it('answers 200 {authenticated: false} to a visitor without a session, and sets no cookie', async () => {
    const response = await probe();
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ authenticated: false });
    expect(response.headers['set-cookie']).toBeUndefined();
    expect(response.headers['cache-control']).toBe('no-store');
    // The user route keeps its contract for API clients.
    const user = await t.app.inject({ url: '/api/v1/user' });
    expect(user.statusCode).toBe(401);
    expect(errorCode(user)).toBe('INVALID_TOKEN');
  });

  it('names the signed-in user exactly as GET /api/v1/user does, by cookie or bearer token', async () => {
    const cookie = withCookie(await consoleCookie('ida@stellwerk.test'));
    const response = await probe(cookie);
    expect(response.statusCode).toBe(200);
    const user = await t.app.inject({ url: '/api/v1/user', headers: cookie });
    expect(response.json()).toEqual({ authenticated: true, user: user.json<unknown>() });
    expect(response.json()).toMatchObject({
      user: { email: 'ida@stellwerk.test', permissions: ['all.read'] },
    });

    const token = await bearer(t, 'ida@stellwerk.test');
    expect((await probe({ authorization: `Bearer ${token}` })).json()).toMatchObject({
      authenticated: true,
      user: { email: 'ida@stellwerk.test' },
    });
  });

  it('answers {authenticated: false} to an ended session and clears its cookie', async () => {
    const value = await consoleCookie('ida@stellwerk.test');
    const logout = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/logout',
      headers: { ...CSRF, ...withCookie(value) },
    });
    expect(logout.statusCode).toBe(204);
    const response = await probe(withCookie(value), '10.40.1.1');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ authenticated: false });
    expect(clearedCookie(response)).toBeDefined();
  });

  it('counts invalid credentials against the address as every route does; absent ones do not count', async () => {
    for (let i = 0; i < FAILURES + 5; i++)
      expect((await probe({}, '10.40.2.1')).statusCode, `visit ${i + 1}`).toBe(200);
    for (let i = 0; i < FAILURES; i++)
      expect((await probe(withCookie(`guess-${i}`), '10.40.3.1')).json()).toEqual({ authenticated: false });
    const refused = await probe(withCookie('guess-again'), '10.40.3.1');
    expect(refused.statusCode).toBe(429);
    expect(errorCode(refused)).toBe('API_LIMIT_REACHED');
  });

  it('refuses an API key as the user route does: it is not a person', async () => {
    const token = await bearer(t, ADMIN_EMAIL, { password: ADMIN_PASSWORD });
    const created = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/api-keys',
      headers: { authorization: `Bearer ${token}` },
      payload: { title: 'probe', permissions: ['all.read'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const key = created.json<{ key: string }>().key;
    const response = await probe({ 'x-api-key': key }, '10.40.4.1');
    expect(response.statusCode).toBe(403);
    expect(errorCode(response)).toBe('USER_REQUIRED');
  });
});
