import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearer,
  caller,
  errorCode,
  expectStatus,
  login,
  type Credentials,
  type UserBody,
  builtInRoleIds,
} from './support/identity.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp.js';
import { createTestApp, json, type TestApp } from './support/test-app.js';

/** Invitation mail against a real SMTP server on a free loopback port (smtp-server). */
let t: TestApp;
let smtp: TestSmtpServer;
let admin: Credentials;
let call: ReturnType<typeof caller>;
let clockOffsetMs = 0;
let builtIn: Record<string, string> = {};

beforeAll(async () => {
  smtp = await startSmtpServer();
  t = await createTestApp({
    env: { STELLWERK_SMTP_URL: smtp.url, STELLWERK_MAIL_FROM: 'Stellwerk <stellwerk@example.test>' },
    clock: () => new Date(Date.now() + clockOffsetMs),
  });
  admin = bearer(await login(t));
  call = caller(t, admin);
  builtIn = await builtInRoleIds(call);
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

describe('users: invitations', () => {
  // The console's page sends X-Requested-With, as the CSRF guard of /api/ requires.
  const accept = (token: string, password: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/invitations/accept',
      headers: { 'x-requested-with': 'stellwerk-console' },
      payload: { token, password },
    });

  const invitationLink = (text: string) => {
    const match = /(http:\/\/localhost:8080\/invitation\?token=([A-Za-z0-9_%-]+))/.exec(text);
    expect(match, text).not.toBeNull();
    return { link: match![1]!, token: decodeURIComponent(match![2]!) };
  };

  it('mails a one-time link; accepting it sets the password and lets the user log in', async () => {
    const created = expectStatus<UserBody>(
      await call('POST', '/xapi/v1/users', {
        email: 'invitee@stellwerk.test',
        name: 'Invitee',
        roleIds: [builtIn.AccountReader],
      }),
      201,
    );
    expect(created.invitation?.delivery).toBe('smtp');
    // A mailed link reaches only the mailbox: the reply does not repeat it.
    expect(created.invitation).not.toHaveProperty('link');
    expect(created).toMatchObject({ passwordSet: false, invitationPending: true });

    const mail = await smtp.waitFor('invitee@stellwerk.test');
    expect(mail.from).toBe('stellwerk@example.test');
    expect(mail.decoded).toContain('Subject: Your Stellwerk invitation');
    const { token } = invitationLink(mail.decoded);

    const before = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/auth/login',
      payload: { email: 'invitee@stellwerk.test', password: 'invitee chosen password' },
    });
    expect(before.statusCode).toBe(401);

    const accepted = await accept(token, 'invitee chosen password');
    expectStatus(accepted, 200);
    expect(json<{ email: string }>(accepted).email).toBe('invitee@stellwerk.test');

    await login(t, 'invitee@stellwerk.test', 'invitee chosen password');
    const again = await accept(token, 'someone else’s password');
    expect(again.statusCode).toBe(403);
    expect(errorCode(again)).toBe('INVALID_INVITATION');
    await login(t, 'invitee@stellwerk.test', 'invitee chosen password');
    const after = expectStatus<UserBody>(await call('GET', `/xapi/v1/users/${created.id}`), 200);
    expect(after).toMatchObject({ passwordSet: true, invitationPending: false });
  });

  it('names the invited address for an open link only, limited per client like accepting', async () => {
    const lookup = (token: string, remoteAddress = '127.0.0.1') =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/invitations/lookup',
        headers: { 'x-requested-with': 'stellwerk-console' },
        payload: { token },
        remoteAddress,
      });
    await call('POST', '/xapi/v1/users', {
      email: 'lookup@stellwerk.test',
      roleIds: [builtIn.AccountReader],
    });
    const { token } = invitationLink((await smtp.waitFor('lookup@stellwerk.test')).decoded);

    expect(expectStatus(await lookup(token), 200)).toEqual({ email: 'lookup@stellwerk.test' });
    const unknown = await lookup('not-a-token-anyone-was-given');
    expect(unknown.statusCode).toBe(403);
    expect(errorCode(unknown)).toBe('INVALID_INVITATION');
    expectStatus(await accept(token, 'lookup chosen password'), 200);
    const spent = await lookup(token);
    expect(spent.statusCode).toBe(403);
    expect(errorCode(spent)).toBe('INVALID_INVITATION');

    // Guessing tokens from one address ends at the route's limit of 10 a minute.
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await lookup(`guess-${i}`, '192.0.2.7')).statusCode);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(403));
    expect(statuses[10]).toBe(429);
  });

  it('sends no mail with suppressInvitation: true', async () => {
    const created = expectStatus<UserBody>(
      await call('POST', '/xapi/v1/users', { email: 'quiet@stellwerk.test', suppressInvitation: true }),
      201,
    );
    expect(created.invitation).toBeNull();
    // Mail is handed over before the create call answers, so a later mail arriving proves the order.
    await call('POST', '/xapi/v1/users', { email: 'loud@stellwerk.test' });
    await smtp.waitFor('loud@stellwerk.test');
    expect(smtp.received.filter((m) => m.to.includes('quiet@stellwerk.test'))).toEqual([]);
  });

  it('refuses expired links and weak passwords; a new invitation replaces the old link', async () => {
    const created = expectStatus<UserBody>(
      await call('POST', '/xapi/v1/users', { email: 'late@stellwerk.test' }),
      201,
    );
    const first = invitationLink((await smtp.waitFor('late@stellwerk.test')).decoded).token;

    const weak = await accept(first, 'short');
    expect(weak.statusCode).toBe(400);
    expect(errorCode(weak)).toBe('VALIDATION_ERROR');

    clockOffsetMs = 8 * 24 * 3600 * 1000;
    try {
      const expired = await accept(first, 'late but long password');
      expect(expired.statusCode).toBe(403);
      expect(errorCode(expired)).toBe('INVALID_INVITATION');
    } finally {
      clockOffsetMs = 0;
    }

    const countBefore = smtp.received.length;
    const reissued = expectStatus<{ delivery: string }>(
      await call('POST', `/xapi/v1/users/${created.id}/invitation`),
      200,
    );
    expect(reissued.delivery).toBe('smtp');
    const second = invitationLink(
      smtp.received.slice(countBefore).find((m) => m.to.includes('late@stellwerk.test'))!.decoded,
    ).token;
    expect(second).not.toBe(first);
    const old = await accept(first, 'late but long password');
    expect(errorCode(old)).toBe('INVALID_INVITATION');
    expectStatus(await accept(second, 'late but long password'), 200);
    const noLonger = await call('POST', `/xapi/v1/users/${created.id}/invitation`);
    expect(noLonger.statusCode).toBe(409);
    expect(errorCode(noLonger)).toBe('PASSWORD_ALREADY_SET');
  });

  it('does not mail users created with a password', async () => {
    expectStatus(
      await call('POST', '/xapi/v1/users', {
        email: 'has-password@stellwerk.test',
        password: 'a good long password',
      }),
      201,
    );
    await call('POST', '/xapi/v1/users', { email: 'marker@stellwerk.test' });
    await smtp.waitFor('marker@stellwerk.test');
    expect(smtp.received.filter((m) => m.to.includes('has-password@stellwerk.test'))).toEqual([]);
  });
});

describe('users: invitations without SMTP', () => {
  let plain: TestApp;
  beforeAll(async () => {
    plain = await createTestApp();
  });
  afterAll(() => plain.close());

  it('creates the invitation and reports that its link went to the log', async () => {
    const c = caller(plain, bearer(await login(plain)));
    const created = expectStatus<UserBody>(
      await c('POST', '/xapi/v1/users', { email: 'nomail@stellwerk.test' }),
      201,
    );
    expect(created.invitation?.delivery).toBe('log');
    expect(created.invitationPending).toBe(true);

    // The administrator gets the link to hand over; it is the one the log has, and it works once.
    const link = created.invitation?.link ?? '';
    const token = decodeURIComponent(/\/invitation\?token=([A-Za-z0-9_%-]+)$/.exec(link)?.[1] ?? '');
    expect(token).not.toBe('');
    const accept = () =>
      plain.app.inject({
        method: 'POST',
        url: '/api/v1/invitations/accept',
        headers: { 'x-requested-with': 'stellwerk-console' },
        payload: { token, password: 'handed over by the admin' },
      });
    expect((await accept()).statusCode).toBe(200);
    expect((await accept()).statusCode).toBe(403);
  });
});
