import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, enableTwoFactor, errorCode, login, nextCode, TestClock } from './support/auth.js';
import { jsonLines, runStellwerk } from './support/cli-process.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, type TestApp } from './support/test-app.js';

/**
 * `stellwerk admin reset-password` and `admin disable-2fa`, run as the real command against the
 * server's database while the server runs: an admin locked out by failed logins and then without
 * their authenticator gets in again, and each step leaves an audit event (table and log line).
 */

const MAX_FAILURES = 3;
const NEW_PASSWORD = 'a brand new admin password';
const clock = new TestClock();
let t: TestApp;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp({
    clock: clock.now,
    env: {
      STELLWERK_LOGIN_MAX_FAILURES: String(MAX_FAILURES),
      STELLWERK_LOGIN_MAX_FAILURES_PER_CLIENT: '1000',
      STELLWERK_LOGIN_LOCK_MS: '600000',
    },
  });
  env = {
    DATABASE_URL: t.config.databaseUrl!,
    STELLWERK_DATA_DIR: path.join(os.tmpdir(), 'stellwerk-cli-unused'),
  };
});
afterAll(() => t?.close());

async function auditActions(userId: string): Promise<{ action: string; actor_kind: string }[]> {
  return t.orm.em
    .getConnection()
    .execute('SELECT action, actor_kind FROM audit_events WHERE target_id = ? ORDER BY id', [userId]);
}

describe('stellwerk admin recovery', () => {
  it('lets a locked-out admin without their authenticator in again, with an audit line per step', async () => {
    const headers = { authorization: `Bearer ${await bearer(t, ADMIN_EMAIL, { password: ADMIN_PASSWORD })}` };
    const { secret } = await enableTwoFactor(t, clock, headers);
    const admin = await t.withContext(() => t.services.users.findByEmail(ADMIN_EMAIL));

    // Locked out: the failures lock the address, so even the right password and code are refused.
    for (let i = 0; i < MAX_FAILURES; i++) await login(t, ADMIN_EMAIL, { password: 'not the password' });
    const locked = await login(t, ADMIN_EMAIL, {
      password: ADMIN_PASSWORD,
      otp: await nextCode(clock, secret),
    });
    expect(errorCode(locked)).toBe('LOGIN_THROTTLED');

    const reset = await runStellwerk(
      ['admin', 'reset-password', '--email', ADMIN_EMAIL, '--password-stdin'],
      env,
      {
        stdin: `${NEW_PASSWORD}\n`,
      },
    );
    expect(reset.stderr.split('\n').filter((l) => !l.startsWith('{'))).toEqual(['']);
    expect(reset).toMatchObject({
      code: 0,
      stdout: expect.stringContaining(`password of ${ADMIN_EMAIL} reset`) as string,
    });
    expect(jsonLines(reset.stderr)).toContainEqual(
      expect.objectContaining({
        msg: 'audit: user.password.reset',
        audit: expect.objectContaining({ actor: { kind: 'system', id: null } }) as unknown,
      }),
    );
    expect(
      (await login(t, ADMIN_EMAIL, { password: ADMIN_PASSWORD, otp: await nextCode(clock, secret) }))
        .statusCode,
    ).toBe(401);
    expect(
      (await login(t, ADMIN_EMAIL, { password: NEW_PASSWORD, otp: await nextCode(clock, secret) }))
        .statusCode,
    ).toBe(200);

    // The authenticator is lost: without a code the login is refused until 2FA is turned off.
    expect((await login(t, ADMIN_EMAIL, { password: NEW_PASSWORD })).statusCode).not.toBe(200);
    const disable = await runStellwerk(['admin', 'disable-2fa', '--email', ADMIN_EMAIL], env);
    expect(disable).toMatchObject({ code: 0, stdout: expect.stringContaining('turned off') as string });
    expect(jsonLines(disable.stderr).map((l) => l.msg)).toContain('audit: user.twoFactor.disable');
    expect((await login(t, ADMIN_EMAIL, { password: NEW_PASSWORD })).statusCode).toBe(200);

    expect(await auditActions(admin!.id)).toEqual([
      { action: 'user.password.reset', actor_kind: 'system' },
      { action: 'user.twoFactor.disable', actor_kind: 'system' },
    ]);
  });

  it('creates an admin who can log in with the printed password', async () => {
    const email = 'second-admin@stellwerk.test';
    const created = await runStellwerk(['admin', 'create', '--email', email], env);
    expect(created.code).toBe(0);
    const password = /^password: (\S+)$/m.exec(created.stdout)?.[1];
    expect(password).toBeDefined();
    expect((await login(t, email, { password })).statusCode).toBe(200);
  });

  it('fails with a one-line reason and a non-zero exit for an unknown user', async () => {
    const result = await runStellwerk(['admin', 'disable-2fa', '--email', 'nobody@stellwerk.test'], env);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'stellwerk admin disable-2fa: no user with the e-mail address nobody@stellwerk.test',
    );
  });
});
