import type { LightMyRequestResponse } from 'fastify';
import { totpCode } from '../../../server/src/auth/totp.js';
import type { User } from '../../../server/src/users/user.entity.js';
import type { TestApp } from './test-app.js';

/** Helpers shared by the authentication tests. */

export const USER_PASSWORD = 'a long enough test password';

/** Real time plus an offset the test moves forward: expiry, locks and TOTP steps without sleeping. */
export class TestClock {
  private offsetMs = 0;
  readonly now = (): Date => new Date(Date.now() + this.offsetMs);
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

export async function createUser(
  t: TestApp,
  email: string,
  options: { accountId?: string; role?: string; password?: string } = {},
): Promise<User> {
  return t.withContext(async () => {
    const role = await t.services.roles.builtIn(options.role ?? 'Administrator');
    return t.services.users.create({
      accountId: options.accountId ?? t.rootAccountId,
      email,
      name: email.split('@')[0],
      password: options.password ?? USER_PASSWORD,
      roleIds: role ? [role.id] : [],
    });
  });
}

export interface LoginOptions {
  otp?: string;
  recoveryCode?: string;
  ip?: string;
  password?: string;
}

export const loginBody = (email: string, o: LoginOptions = {}) => ({
  email,
  password: o.password ?? USER_PASSWORD,
  ...(o.otp ? { otp: o.otp } : {}),
  ...(o.recoveryCode ? { recoveryCode: o.recoveryCode } : {}),
});

export function login(t: TestApp, email: string, o: LoginOptions = {}): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/xapi/v1/auth/login',
    payload: loginBody(email, o),
    ...(o.ip ? { remoteAddress: o.ip } : {}),
  });
}

export async function bearer(t: TestApp, email: string, o: LoginOptions = {}): Promise<string> {
  const response = await login(t, email, o);
  if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`);
  return response.json<{ token: string }>().token;
}

export const errorCode = (response: LightMyRequestResponse): string | undefined =>
  response.json<{ error?: { code: string } }>().error?.code;

export interface SetCookie {
  name: string;
  value: string;
  /** Attribute names lower-cased; flag attributes map to true. */
  attributes: Record<string, string | true>;
}

/** Parses the raw Set-Cookie headers, so attribute spelling is checked as a browser sees it. */
export function setCookies(response: LightMyRequestResponse): SetCookie[] {
  const raw = response.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [String(raw)];
  return lines.map((line) => {
    const [pair = '', ...attrs] = line.split(';').map((part) => part.trim());
    const eq = pair.indexOf('=');
    const attributes: Record<string, string | true> = {};
    for (const attr of attrs) {
      const i = attr.indexOf('=');
      if (i === -1) attributes[attr.toLowerCase()] = true;
      else attributes[attr.slice(0, i).toLowerCase()] = attr.slice(i + 1);
    }
    return { name: pair.slice(0, eq), value: decodeURIComponent(pair.slice(eq + 1)), attributes };
  });
}

/** Enrols and activates 2FA for the holder of `auth` headers; returns the seed and recovery codes. */
export async function enableTwoFactor(
  t: TestApp,
  clock: TestClock,
  headers: Record<string, string>,
  base = '/xapi/v1/users/me/2fa',
): Promise<{ secret: string; recoveryCodes: string[]; activation: LightMyRequestResponse }> {
  const enrolment = await t.app.inject({ method: 'POST', url: base, headers });
  if (enrolment.statusCode !== 200)
    throw new Error(`enrolment failed: ${enrolment.statusCode} ${enrolment.body}`);
  const { secret } = enrolment.json<{ secret: string }>();
  const activation = await t.app.inject({
    method: 'POST',
    url: `${base}/activate`,
    headers,
    payload: { otp: await totpCode(secret, clock.now()) },
  });
  if (activation.statusCode !== 200)
    throw new Error(`activation failed: ${activation.statusCode} ${activation.body}`);
  return { secret, recoveryCodes: activation.json<{ recoveryCodes: string[] }>().recoveryCodes, activation };
}

/** A code of the next 30-second step: the previous step's code has been used already. */
export async function nextCode(clock: TestClock, secret: string): Promise<string> {
  clock.advance(30_000);
  return totpCode(secret, clock.now());
}
