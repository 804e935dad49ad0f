import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, login } from './support/auth.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ admin: false });
});
afterAll(() => t.close());

const CSRF = { 'x-requested-with': 'stellwerk' };
const ADMIN = { email: 'first.admin@stellwerk.test', password: 'first admin password', name: 'First Admin' };

const onboard = (setupToken: string, headers: Record<string, string> = CSRF) =>
  t.app.inject({ method: 'POST', url: '/api/v1/onboarding', headers, payload: { setupToken, ...ADMIN } });

describe('first start without STELLWERK_ADMIN_*', () => {
  it('hands out a one-time setup token and reports that onboarding is required', async () => {
    expect(t.setupToken).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const state = await t.app.inject({ url: '/api/v1/onboarding' });
    expect(state.json()).toEqual({ required: true });
  });

  it('prints the same token when another node starts on the same database, so the first stays valid', async () => {
    const again = await t.withContext(() => t.services.bootstrap.run(t.config, t.app.log));
    expect(again.setupToken).toBe(t.setupToken);
  });

  it('refuses a wrong token with 403 INVALID_SETUP_TOKEN and a request without the CSRF header', async () => {
    const wrong = await onboard('not-the-token');
    expect(wrong.statusCode).toBe(403);
    expect(errorCode(wrong)).toBe('INVALID_SETUP_TOKEN');
    const forged = await onboard(t.setupToken!, {});
    expect(forged.statusCode).toBe(403);
    expect(errorCode(forged)).toBe('CSRF_CHECK_FAILED');
  });

  it('creates exactly one first admin with the right token, even when two requests race', async () => {
    const rival = { ...ADMIN, email: 'rival.admin@stellwerk.test' };
    const [first, second] = await Promise.all([
      onboard(t.setupToken!),
      t.app.inject({
        method: 'POST',
        url: '/api/v1/onboarding',
        headers: CSRF,
        payload: { setupToken: t.setupToken!, ...rival },
      }),
    ]);
    expect([first.statusCode, second.statusCode].sort()).toEqual([201, 403]);
    expect(errorCode(first.statusCode === 201 ? second : first)).toBe('INVALID_SETUP_TOKEN');
    const winner = first.statusCode === 201 ? ADMIN : rival;
    const users = await t.withContext(() => t.services.users.count());
    expect(users).toBe(1);

    const response = await login(t, winner.email, { password: ADMIN.password });
    expect(response.statusCode).toBe(200);
    const body = response.json<{ token: string; user: { accountId: string; permissions: string[] } }>();
    expect(body.user.accountId).toBe(t.rootAccountId);
    expect(body.user.permissions).toContain('all.manage');
    const accounts = await t.app.inject({
      url: '/xapi/v1/accounts',
      headers: { authorization: `Bearer ${body.token}` },
    });
    expect(accounts.statusCode).toBe(200);
    expect((await t.app.inject({ url: '/api/v1/onboarding' })).json()).toEqual({ required: false });
  });

  it('does not accept the token a second time', async () => {
    const again = await onboard(t.setupToken!);
    expect(again.statusCode).toBe(403);
    expect(errorCode(again)).toBe('INVALID_SETUP_TOKEN');
  });

  it('prints no token once an admin exists (a restart)', async () => {
    const boot = await t.withContext(() => t.services.bootstrap.run(t.config, t.app.log));
    expect(boot.setupToken).toBeUndefined();
  });
});
