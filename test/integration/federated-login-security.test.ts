import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Account } from '../../server/src/accounts/account.entity.js';
import { totpCode } from '../../server/src/auth/totp.js';
import { FederatedIdentity, User } from '../../server/src/users/user.entity.js';
import { enableTwoFactor, nextCode, TestClock } from './support/auth.js';
import {
  federatedBrowser,
  hasSessionCookie,
  providerConfig,
  setCookiesOf,
} from './support/federated-browser.js';
import {
  bearer,
  caller,
  errorCode,
  expectStatus,
  login,
  userWithPermissions,
  type Credentials,
} from './support/identity.js';
import { startOidcProvider, type TestOidcProvider } from './support/oidc-provider.js';
import { createTestApp, json, type TestApp } from './support/test-app.js';

/**
 * Federated login against a real OpenID provider, from the attacker's side: whoever controls the
 * provider controls every claim (iss, sub, email, email_verified, amr). Neither a lesser
 * permission holder nor the provider may turn that into a session of a better-protected user.
 */

const PUBLIC_URL = 'http://localhost:8080';
const SECOND_FACTOR_PAGE = '/#/login?step=federated-code';
const BOSS = { email: 'boss@victim.test', password: 'boss password 12345' };

let t: TestApp;
let provider: TestOidcProvider;
const clock = new TestClock();
let root: Credentials;
let victim: string;
let bossSecret: string;

const call = (credentials: Credentials) => caller(t, credentials);
const configure = (accountId: string, extra: Record<string, unknown> = {}, as: Credentials = root) =>
  call(as)('PUT', `/xapi/v1/accounts/${accountId}`, {
    oauthConfig: providerConfig(provider, PUBLIC_URL, extra),
  });
const linksOf = (email: string) =>
  t.withContext(async () => {
    const em = t.orm.em.fork();
    const user = await em.findOneOrFail(User, { email });
    return em.count(FederatedIdentity, { user: user.id });
  });
const code = async () => nextCode(clock, bossSecret);

beforeAll(async () => {
  t = await createTestApp({ env: { STELLWERK_PUBLIC_URL: PUBLIC_URL }, clock: clock.now });
  provider = await startOidcProvider(`${PUBLIC_URL}/api/v1/oauth2/callback`);
  root = bearer(await login(t));
  victim = expectStatus<{ id: string }>(
    await call(root)('POST', '/xapi/v1/accounts', { title: 'Victim Works' }),
    201,
  ).id;
  const roles = await t.withContext(async () => ({
    admin: (await t.services.roles.builtIn('Administrator'))!.id,
  }));
  expectStatus(
    await call(root)('POST', '/xapi/v1/users', { ...BOSS, accountId: victim, roleIds: [roles.admin] }),
    201,
  );
  const bossToken = await login(t, BOSS.email, BOSS.password);
  bossSecret = (await enableTwoFactor(t, clock, { authorization: `Bearer ${bossToken}` })).secret;
  // Whoever runs the provider can claim any e-mail, verified.
  provider.users.set('boss-at-idp', { email: BOSS.email, email_verified: true });
});

afterAll(async () => {
  await provider?.close();
  await t?.close();
});

describe('federated login takeover', () => {
  it('an account.manage user cannot point the account at a provider they control', async () => {
    const mallory = await userWithPermissions(t, root, 'Mallory', ['account.manage'], { accountId: victim });
    const attempt = await configure(victim, {}, bearer(mallory.token));
    expect(attempt.statusCode, attempt.body).toBe(403);
    expect(errorCode(attempt)).toBe('NO_PERMISSION_IDENTITYPROVIDER.MANAGE');
    const account = await t.withContext(() => t.orm.em.fork().findOneOrFail(Account, { id: victim }));
    expect(account.oauthConfig).toBeNull();
    // So the federated login the attack needs does not exist.
    const start = await federatedBrowser(t, PUBLIC_URL).get(`/api/v1/oauth2/authorize?accountId=${victim}`);
    expect(start.statusCode).toBe(404);
  });

  it('a provider configured by the admin still does not skip the TOTP of a user who has one', async () => {
    expectStatus(await configure(victim), 200);
    const browser = federatedBrowser(t, PUBLIC_URL);
    const callback = await browser.login(victim, 'boss-at-idp', '/dashboards');
    expect(callback.statusCode, callback.body).toBe(302);
    expect(callback.headers.location).toBe(SECOND_FACTOR_PAGE);
    expect(hasSessionCookie(callback)).toBe(false);
    expect((await browser.get('/api/v1/user')).statusCode).toBe(401);
    // Matched by e-mail, but not linked before the code: the provider alone proves nothing.
    expect(await linksOf(BOSS.email)).toBe(0);

    const wrong = await browser.post('/api/v1/oauth2/second-factor', { otp: '000000' });
    expect(wrong.statusCode).toBe(401);
    expect(errorCode(wrong)).toBe('INVALID_TWO_FACTOR_CODE');
    const elsewhere = federatedBrowser(t, PUBLIC_URL);
    const stolen = await elsewhere.post('/api/v1/oauth2/second-factor', { otp: await code() });
    expect(stolen.statusCode).toBe(401);
    expect(errorCode(stolen)).toBe('OAUTH_STATE_INVALID');

    const done = await browser.post('/api/v1/oauth2/second-factor', { otp: await code() });
    expect(done.statusCode, done.body).toBe(200);
    expect(json<{ returnTo: string; user: { email: string } }>(done)).toMatchObject({
      returnTo: '/dashboards',
      user: { email: BOSS.email },
    });
    expect(hasSessionCookie(done)).toBe(true);
    expect(json<{ email: string }>(await browser.get('/api/v1/user')).email).toBe(BOSS.email);
    expect(await linksOf(BOSS.email)).toBe(1);
    const replay = await browser.post('/api/v1/oauth2/second-factor', { otp: await code() });
    expect(replay.statusCode).toBe(401);

    // Linked now, and still the code every time.
    const again = await federatedBrowser(t, PUBLIC_URL).login(victim, 'boss-at-idp');
    expect(again.headers.location).toBe(SECOND_FACTOR_PAGE);
  });

  it('ignores the provider’s MFA claim unless the account trusts it, and then only when claimed', async () => {
    provider.users.set('boss-at-idp', { email: BOSS.email, email_verified: true, amr: ['pwd', 'mfa'] });
    const untrusted = await federatedBrowser(t, PUBLIC_URL).login(victim, 'boss-at-idp');
    expect(untrusted.headers.location).toBe(SECOND_FACTOR_PAGE);
    expect(hasSessionCookie(untrusted)).toBe(false);

    expectStatus(await configure(victim, { trust_provider_mfa: true }), 200);
    const trusted = await federatedBrowser(t, PUBLIC_URL).login(victim, 'boss-at-idp', '/twins');
    expect(trusted.statusCode, trusted.body).toBe(302);
    expect(trusted.headers.location).toBe('/twins');
    expect(hasSessionCookie(trusted)).toBe(true);

    provider.users.set('boss-at-idp', { email: BOSS.email, email_verified: true, amr: ['pwd'] });
    const single = await federatedBrowser(t, PUBLIC_URL).login(victim, 'boss-at-idp');
    expect(single.headers.location).toBe(SECOND_FACTOR_PAGE);
    expectStatus(await configure(victim), 200);
  });

  it('never logs in a user holding more than the configuration’s author could grant', async () => {
    const plant = expectStatus<{ id: string }>(
      await call(root)('POST', '/xapi/v1/accounts', { title: 'Lesser Works' }),
      201,
    ).id;
    const keeper = await userWithPermissions(
      t,
      root,
      'IdP keeper',
      ['identityProvider.manage', 'account.manage', 'all.read'],
      {
        accountId: plant,
      },
    );
    const admins = await userWithPermissions(t, root, 'Plant admin', ['all.manage'], { accountId: plant });
    expectStatus(await configure(plant, {}, bearer(keeper.token)), 200);
    provider.users.set('plant-admin', { email: admins.email, email_verified: true, amr: ['mfa'] });
    provider.users.set('plant-reader', { email: 'reader@plant.test', email_verified: true });

    const refused = await federatedBrowser(t, PUBLIC_URL).login(plant, 'plant-admin');
    expect(refused.statusCode, refused.body).toBe(403);
    expect(errorCode(refused)).toBe('FEDERATED_LOGIN_NOT_ALLOWED');
    expect(hasSessionCookie(refused)).toBe(false);
    expect(await linksOf(admins.email)).toBe(0);
    const reader = await federatedBrowser(t, PUBLIC_URL).login(plant, 'plant-reader');
    expect(reader.statusCode, reader.body).toBe(302);
  });

  it('sends a password user of a mandatory-2FA account without TOTP to set it up with the password first', async () => {
    const strict = expectStatus<{ id: string }>(
      await call(root)('POST', '/xapi/v1/accounts', { title: 'Strict Works', mandatoryTwoFactor: true }),
      201,
    );
    await t.withContext(() =>
      t.services.users.create({
        accountId: strict.id,
        email: 'worker@strict.test',
        password: 'worker password 123',
      }),
    );
    expectStatus(await configure(strict.id), 200);
    provider.users.set('worker', { email: 'worker@strict.test', email_verified: true });
    const response = await federatedBrowser(t, PUBLIC_URL).login(strict.id, 'worker');
    expect(response.statusCode, response.body).toBe(403);
    expect(errorCode(response)).toBe('FEDERATED_TWO_FACTOR_SETUP_REQUIRED');
    expect(await linksOf('worker@strict.test')).toBe(0);
  });

  it('refuses a configuration saved before its author was recorded until it is saved again', async () => {
    await t.withContext(async () => {
      const em = t.orm.em.fork();
      const account = await em.findOneOrFail(Account, { id: victim });
      const { author: _author, ...legacy } = account.oauthConfig!;
      account.oauthConfig = legacy;
      await em.flush();
    });
    const start = await federatedBrowser(t, PUBLIC_URL).get(`/api/v1/oauth2/authorize?accountId=${victim}`);
    expect(start.statusCode).toBe(422);
    expect(errorCode(start)).toBe('OAUTH_CONFIG_UNCONFIRMED');
    expectStatus(await configure(victim), 200);
    const again = await federatedBrowser(t, PUBLIC_URL).get(`/api/v1/oauth2/authorize?accountId=${victim}`);
    expect(again.statusCode).toBe(302);
  });

  it('lets a waiting login expire after 5 minutes', async () => {
    const browser = federatedBrowser(t, PUBLIC_URL);
    const callback = await browser.login(victim, 'boss-at-idp');
    expect(callback.headers.location).toBe(SECOND_FACTOR_PAGE);
    expect(setCookiesOf(callback).some((c) => c.startsWith('__Host-stellwerk_oauth_2fa='))).toBe(true);
    clock.advance(5 * 60_000 + 1000);
    const late = await browser.post('/api/v1/oauth2/second-factor', {
      otp: await totpCode(bossSecret, clock.now()),
    });
    expect(late.statusCode).toBe(401);
    expect(errorCode(late)).toBe('OAUTH_STATE_INVALID');
  });
});
