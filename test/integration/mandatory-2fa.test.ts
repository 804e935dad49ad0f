import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../server/src/auth/totp.js';
import {
  bearer,
  createUser,
  errorCode,
  login,
  loginBody,
  nextCode,
  setCookies,
  TestClock,
} from './support/auth.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, type TestApp } from './support/test-app.js';

const clock = new TestClock();
let t: TestApp;
let strictAccountId: string;

beforeAll(async () => {
  t = await createTestApp({ clock: clock.now });
  const admin = await bearer(t, ADMIN_EMAIL, { password: ADMIN_PASSWORD });
  const account = await t.app.inject({
    method: 'POST',
    url: '/xapi/v1/accounts',
    headers: { authorization: `Bearer ${admin}` },
    payload: { title: 'Strict Plant', mandatoryTwoFactor: true },
  });
  expect(account.statusCode).toBe(201);
  strictAccountId = account.json<{ id: string }>().id;
  await createUser(t, 'jon@stellwerk.test', { accountId: strictAccountId });
  await createUser(t, 'kim@stellwerk.test', { accountId: strictAccountId });
});
afterAll(() => t.close());

const setupTokenOf = (response: LightMyRequestResponse): string => {
  const details = response.json<{ error: { details: { setupToken?: string }[] } }>().error.details;
  const token = details[0]?.setupToken;
  if (!token) throw new Error(`no setupToken in ${response.body}`);
  return token;
};

const as = (token: string) => ({ authorization: `Bearer ${token}` });

describe('mandatory 2FA per account', () => {
  it('leads a user without 2FA through setup, then lets them log in with a code', async () => {
    const first = await login(t, 'jon@stellwerk.test');
    expect(first.statusCode).toBe(403);
    expect(errorCode(first)).toBe('TWO_FACTOR_SETUP_REQUIRED');
    const setupToken = setupTokenOf(first);

    // The setup token opens nothing but enrolment.
    for (const url of ['/xapi/v1/accounts', '/api/v1/user']) {
      const refused = await t.app.inject({ url, headers: as(setupToken) });
      expect(refused.statusCode).toBe(403);
      expect(errorCode(refused)).toBe('TWO_FACTOR_SETUP_REQUIRED');
    }
    const deactivate = await t.app.inject({
      method: 'DELETE',
      url: '/xapi/v1/users/me/2fa',
      headers: as(setupToken),
      payload: { otp: '000000' },
    });
    expect(errorCode(deactivate)).toBe('TWO_FACTOR_SETUP_REQUIRED');

    const enrolment = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/users/me/2fa',
      headers: as(setupToken),
    });
    expect(enrolment.statusCode).toBe(200);
    const { secret } = enrolment.json<{ secret: string }>();
    const activation = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/users/me/2fa/activate',
      headers: as(setupToken),
      payload: { otp: await totpCode(secret, clock.now()) },
    });
    expect(activation.statusCode).toBe(200);
    expect(activation.json<{ recoveryCodes: string[] }>().recoveryCodes).toHaveLength(10);

    // Activation spends the setup token.
    const spent = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/users/me/2fa',
      headers: as(setupToken),
    });
    expect(spent.statusCode).toBe(401);
    expect(errorCode(spent)).toBe('INVALID_TOKEN');

    const noCode = await login(t, 'jon@stellwerk.test');
    expect(errorCode(noCode)).toBe('TWO_FACTOR_REQUIRED');
    const withCode = await login(t, 'jon@stellwerk.test', { otp: await nextCode(clock, secret) });
    expect(withCode.statusCode).toBe(200);
    const token = withCode.json<{ token: string }>().token;
    const accounts = await t.app.inject({ url: '/xapi/v1/accounts', headers: as(token) });
    expect(accounts.statusCode).toBe(200);
  });

  it('gives the console login the same setup answer and no cookie', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'x-requested-with': 'stellwerk' },
      payload: loginBody('kim@stellwerk.test'),
    });
    expect(response.statusCode).toBe(403);
    expect(errorCode(response)).toBe('TWO_FACTOR_SETUP_REQUIRED');
    expect(setCookies(response)).toEqual([]);
    const setupToken = setupTokenOf(response);
    // The console enrols through its mirror of the routes with the token as bearer.
    const enrolment = await t.app.inject({
      method: 'POST',
      url: '/api/v1/user/2fa',
      headers: { ...as(setupToken), 'x-requested-with': 'stellwerk' },
    });
    expect(enrolment.statusCode).toBe(200);
  });

  it('lets setup tokens expire after 15 minutes', async () => {
    const setupToken = setupTokenOf(await login(t, 'kim@stellwerk.test'));
    clock.advance(15 * 60_000 + 1000);
    const expired = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/users/me/2fa',
      headers: as(setupToken),
    });
    expect(expired.statusCode).toBe(401);
    expect(errorCode(expired)).toBe('INVALID_TOKEN');
  });

  it('holds a session opened before the flag was set to enrolment only', async () => {
    const admin = await bearer(t, ADMIN_EMAIL, { password: ADMIN_PASSWORD });
    const sub = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/accounts',
      headers: as(admin),
      payload: { title: 'Later Strict' },
    });
    const subId = sub.json<{ id: string }>().id;
    await createUser(t, 'lou@stellwerk.test', { accountId: subId });
    const token = await bearer(t, 'lou@stellwerk.test');
    expect((await t.app.inject({ url: '/api/v1/user', headers: as(token) })).statusCode).toBe(200);

    const flag = await t.app.inject({
      method: 'PUT',
      url: `/xapi/v1/accounts/${subId}`,
      headers: as(admin),
      payload: { mandatoryTwoFactor: true },
    });
    expect(flag.statusCode).toBe(200);
    expect(errorCode(await t.app.inject({ url: '/api/v1/user', headers: as(token) }))).toBe(
      'TWO_FACTOR_SETUP_REQUIRED',
    );
    expect(
      (await t.app.inject({ method: 'POST', url: '/xapi/v1/users/me/2fa', headers: as(token) })).statusCode,
    ).toBe(200);
  });
});
