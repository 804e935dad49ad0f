import { stringToBytes } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../server/src/auth/totp.js';
import { bearer, createUser, errorCode, login, nextCode, TestClock } from './support/auth.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const clock = new TestClock();
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ clock: clock.now });
});
afterAll(() => t.close());

const EMAIL = 'ida@stellwerk.test';
const BASE = '/xapi/v1/users/me/2fa';

describe('RFC 6238 Appendix B (SHA-1) through the server TOTP module', () => {
  const secret = stringToBytes('12345678901234567890');
  it.each([
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ])('T=%i gives %s', async (seconds, expected) => {
    expect(await totpCode(secret, new Date(seconds * 1000), { digits: 8 })).toBe(expected);
  });
});

describe('TOTP enrolment, login and deactivation', () => {
  let token: string;
  let secret: string;
  let recoveryCodes: string[];
  let activationCode: string;
  const auth = () => ({ authorization: `Bearer ${token}` });
  const dbUser = () =>
    t.withContext(async () => {
      const [row] = await t.orm.em
        .getConnection()
        .execute<{ id: string; totp_secret_sealed: string | null; totp_enabled: boolean }[]>(
          'SELECT id, totp_secret_sealed, totp_enabled FROM users WHERE email = ?',
          [EMAIL],
        );
      return row!;
    });

  beforeAll(async () => {
    await createUser(t, EMAIL);
    token = await bearer(t, EMAIL);
  });

  it('enrols: secret, otpauth URL and a PNG QR code; the secret is stored sealed and not yet active', async () => {
    const response = await t.app.inject({ method: 'POST', url: BASE, headers: auth() });
    expect(response.statusCode).toBe(200);
    const body = response.json<{ secret: string; otpauthUrl: string; qrCode: string }>();
    secret = body.secret;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const url = new URL(body.otpauthUrl);
    expect(url.protocol).toBe('otpauth:');
    expect(url.searchParams.get('secret')).toBe(secret);
    expect(url.searchParams.get('issuer')).toBe('Stellwerk');
    expect(decodeURIComponent(url.pathname)).toContain(EMAIL);
    expect(body.qrCode).toMatch(/^data:image\/png;base64,/);
    const png = Buffer.from(body.qrCode.split(',')[1]!, 'base64');
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');

    const row = await dbUser();
    expect(row.totp_enabled).toBe(false);
    expect(row.totp_secret_sealed).toBeTruthy();
    expect(row.totp_secret_sealed).not.toContain(secret);
    // Not active yet: login still works without a code.
    expect((await login(t, EMAIL)).statusCode).toBe(200);
  });

  it('refuses activation with a wrong code', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: `${BASE}/activate`,
      headers: auth(),
      payload: { otp: '000000' },
    });
    expect(response.statusCode).toBe(422);
    expect(errorCode(response)).toBe('INVALID_TWO_FACTOR_CODE');
  });

  it('activates with a current code and returns 10 distinct recovery codes stored argon2id-hashed', async () => {
    activationCode = await totpCode(secret, clock.now());
    const response = await t.app.inject({
      method: 'POST',
      url: `${BASE}/activate`,
      headers: auth(),
      payload: { otp: activationCode },
    });
    expect(response.statusCode).toBe(200);
    recoveryCodes = response.json<{ recoveryCodes: string[] }>().recoveryCodes;
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    const { id, totp_enabled } = await dbUser();
    expect(totp_enabled).toBe(true);
    const hashes = await t.withContext(() =>
      t.orm.em
        .getConnection()
        .execute<{ code_hash: string }[]>('SELECT code_hash FROM recovery_codes WHERE user_id = ?', [id]),
    );
    expect(hashes).toHaveLength(10);
    for (const { code_hash } of hashes) {
      expect(code_hash).toMatch(/^\$argon2id\$/);
      expect(recoveryCodes.some((c) => code_hash.includes(c))).toBe(false);
    }
    // A second enrolment while active is refused.
    const again = await t.app.inject({ method: 'POST', url: BASE, headers: auth() });
    expect(errorCode(again)).toBe('TWO_FACTOR_ALREADY_ENABLED');
  });

  it('requires the second factor at login; a wrong code is refused', async () => {
    const none = await login(t, EMAIL);
    expect(none.statusCode).toBe(401);
    expect(errorCode(none)).toBe('TWO_FACTOR_REQUIRED');
    const wrong = await login(t, EMAIL, { otp: '123456' });
    expect(wrong.statusCode).toBe(401);
    expect(errorCode(wrong)).toBe('INVALID_TWO_FACTOR_CODE');
    // The password is checked first: a wrong password with a code is plain INVALID_CREDENTIALS.
    const badPassword = await login(t, EMAIL, { otp: '123456', password: 'not the right one' });
    expect(errorCode(badPassword)).toBe('INVALID_CREDENTIALS');
  });

  it('does not accept the code used at activation again', async () => {
    const replay = await login(t, EMAIL, { otp: activationCode });
    expect(errorCode(replay)).toBe('INVALID_TWO_FACTOR_CODE');
  });

  it('accepts a fresh code once; the replayed code is refused', async () => {
    const code = await nextCode(clock, secret);
    const first = await login(t, EMAIL, { otp: code });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ user: { twoFactorEnabled: true } });
    const replay = await login(t, EMAIL, { otp: code });
    expect(replay.statusCode).toBe(401);
    expect(errorCode(replay)).toBe('INVALID_TWO_FACTOR_CODE');
  });

  it('tolerates one step of clock drift, but not two', async () => {
    clock.advance(60_000);
    const ahead = await totpCode(secret, new Date(clock.now().getTime() + 30_000));
    expect((await login(t, EMAIL, { otp: ahead })).statusCode).toBe(200);
    clock.advance(120_000);
    const farBehind = await totpCode(secret, new Date(clock.now().getTime() - 60_000));
    expect(errorCode(await login(t, EMAIL, { otp: farBehind }))).toBe('INVALID_TWO_FACTOR_CODE');
  });

  it('accepts each recovery code for one login only', async () => {
    const code = recoveryCodes[0]!;
    expect((await login(t, EMAIL, { recoveryCode: code })).statusCode).toBe(200);
    const again = await login(t, EMAIL, { recoveryCode: code });
    expect(again.statusCode).toBe(401);
    expect(errorCode(again)).toBe('INVALID_TWO_FACTOR_CODE');
    // Codes are typed by people: case and the dash do not matter.
    expect(
      (await login(t, EMAIL, { recoveryCode: recoveryCodes[1]!.toUpperCase().replace('-', ' ') })).statusCode,
    ).toBe(200);
    expect(errorCode(await login(t, EMAIL, { recoveryCode: 'aaaaa-bbbbb' }))).toBe('INVALID_TWO_FACTOR_CODE');
  });

  it('needs a valid code to deactivate', async () => {
    const without = await t.app.inject({ method: 'DELETE', url: BASE, headers: auth(), payload: {} });
    expect(without.statusCode).toBe(422);
    expect(errorCode(without)).toBe('INVALID_TWO_FACTOR_CODE');
    const wrong = await t.app.inject({
      method: 'DELETE',
      url: BASE,
      headers: auth(),
      payload: { otp: '000000' },
    });
    expect(errorCode(wrong)).toBe('INVALID_TWO_FACTOR_CODE');
    expect((await dbUser()).totp_enabled).toBe(true);

    const ok = await t.app.inject({
      method: 'DELETE',
      url: BASE,
      headers: auth(),
      payload: { otp: await nextCode(clock, secret) },
    });
    expect(ok.statusCode).toBe(204);
    const row = await dbUser();
    expect(row.totp_enabled).toBe(false);
    expect(row.totp_secret_sealed).toBeNull();
    const left = await t.withContext(() =>
      t.orm.em
        .getConnection()
        .execute<{ n: string }[]>('SELECT count(*) AS n FROM recovery_codes WHERE user_id = ?', [row.id]),
    );
    expect(Number(left[0]!.n)).toBe(0);
    expect((await login(t, EMAIL)).statusCode).toBe(200);
    const twice = await t.app.inject({
      method: 'DELETE',
      url: BASE,
      headers: auth(),
      payload: { otp: '000000' },
    });
    expect(errorCode(twice)).toBe('TWO_FACTOR_NOT_ENABLED');
  });

  it('refuses API keys and anonymous callers on the enrolment routes', async () => {
    const anonymous = await t.app.inject({ method: 'POST', url: BASE });
    expect(errorCode(anonymous)).toBe('INVALID_TOKEN');
    const apiKey = await t.app.inject({ method: 'POST', url: BASE, headers: { 'x-api-key': 'not-a-user' } });
    expect(apiKey.statusCode).toBe(403);
    expect(errorCode(apiKey)).toBe('USER_REQUIRED');
  });
});
