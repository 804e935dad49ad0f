import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FederatedIdentity, User } from '../../server/src/users/user.entity.js';
import {
  CookieJar,
  loginAtProvider,
  startOidcProvider,
  type TestOidcProvider,
} from './support/oidc-provider.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, json, type TestApp } from './support/test-app.js';

const PUBLIC_URL = 'http://localhost:8080';
const CALLBACK = `${PUBLIC_URL}/api/v1/oauth2/callback`;

let t: TestApp;
let provider: TestOidcProvider;
let adminToken: string;
/** Added to the server clock: lets a test outlive the 10-minute login state. */
let clockOffsetMs = 0;
let federatedAccountId: string;
let noIssuerAccountId: string;
let otherAccountId: string;

const admin = () => ({ authorization: `Bearer ${adminToken}` });

/** One answer for every login that would reach outside the account: nothing about other tenants. */
const REFUSED = {
  error: {
    code: 'FEDERATED_LOGIN_REFUSED',
    message: 'This provider login cannot be used for this account; ask its administrator',
    details: [],
  },
};

async function createAccount(title: string, oauth?: { issuer?: boolean; scope?: string }): Promise<string> {
  const created = await t.app.inject({
    method: 'POST',
    url: '/xapi/v1/accounts',
    headers: admin(),
    payload: { title },
  });
  expect(created.statusCode).toBe(201);
  const id = json<{ id: string }>(created).id;
  if (oauth) {
    const oauthConfig = {
      scope: oauth.scope ?? 'openid email profile',
      auth_uri: `${provider.issuer}/auth`,
      token_uri: `${provider.issuer}/token`,
      user_info_uri: `${provider.issuer}/me`,
      redirect_uri: CALLBACK,
      client_id: provider.clientId,
      client_secret: provider.clientSecret,
      ...(oauth.issuer ? { issuer: provider.issuer } : {}),
    };
    const saved = await t.app.inject({
      method: 'PUT',
      url: `/xapi/v1/accounts/${id}`,
      headers: admin(),
      payload: { oauthConfig },
    });
    expect(saved.statusCode).toBe(200);
  }
  return id;
}

const setCookies = (response: LightMyRequestResponse): string[] => {
  const header = response.headers['set-cookie'];
  return header === undefined ? [] : [header].flat();
};

/** GET on Stellwerk as the browser holding `jar`; stores the cookies it sets. */
async function stellwerkGet(jar: CookieJar, url: string | URL): Promise<LightMyRequestResponse> {
  const target = new URL(url, PUBLIC_URL);
  const response = await t.app.inject({
    method: 'GET',
    url: `${target.pathname}${target.search}`,
    headers: { cookie: jar.header(PUBLIC_URL) },
  });
  jar.store(PUBLIC_URL, setCookies(response));
  return response;
}

/** authorize → provider login and consent; returns the callback URL the provider sent the browser to. */
async function throughProvider(
  jar: CookieJar,
  accountId: string,
  login: string,
  returnTo?: string,
): Promise<URL> {
  const query = new URLSearchParams({ accountId, ...(returnTo ? { returnTo } : {}) });
  const start = await stellwerkGet(jar, `/api/v1/oauth2/authorize?${query.toString()}`);
  expect(start.statusCode).toBe(302);
  return loginAtProvider(start.headers.location as string, login, jar);
}

async function fullLogin(accountId: string, login: string, returnTo?: string) {
  const jar = new CookieJar();
  const callback = await throughProvider(jar, accountId, login, returnTo);
  const finish = await stellwerkGet(jar, callback);
  return { jar, callback, finish };
}

const identitiesOf = (email: string) =>
  t.withContext(async () => {
    const em = t.orm.em.fork();
    const user = await em.findOne(User, { email });
    return user ? em.count(FederatedIdentity, { user: user.id }) : -1;
  });

beforeAll(async () => {
  t = await createTestApp({
    env: { STELLWERK_PUBLIC_URL: PUBLIC_URL },
    clock: () => new Date(Date.now() + clockOffsetMs),
  });
  provider = await startOidcProvider(CALLBACK);
  const login = await t.app.inject({
    method: 'POST',
    url: '/xapi/v1/auth/login',
    payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
  });
  expect(login.statusCode).toBe(200);
  adminToken = json<{ token: string }>(login).token;
  federatedAccountId = await createAccount('Federated Works', { issuer: true });
  noIssuerAccountId = await createAccount('No Issuer Works', {});
  otherAccountId = await createAccount('Other Works');
  provider.users.set('alice', {
    email: 'alice@federated.test',
    email_verified: true,
    name: 'Alice Federated',
  });
});

afterAll(async () => {
  await provider?.close();
  await t?.close();
});

describe('federated login (OIDC)', () => {
  it('redirects to the provider with code flow, PKCE S256, state and nonce', async () => {
    const jar = new CookieJar();
    const start = await stellwerkGet(jar, `/api/v1/oauth2/authorize?accountId=${federatedAccountId}`);
    expect(start.statusCode).toBe(302);
    const target = new URL(start.headers.location as string);
    expect(`${target.origin}${target.pathname}`).toBe(`${provider.issuer}/auth`);
    const p = target.searchParams;
    expect(p.get('response_type')).toBe('code');
    expect(p.get('client_id')).toBe(provider.clientId);
    expect(p.get('redirect_uri')).toBe(CALLBACK);
    expect(p.get('scope')).toBe('openid email profile');
    expect(p.get('code_challenge_method')).toBe('S256');
    expect(p.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(p.get('state')!.length).toBeGreaterThanOrEqual(43);
    expect(p.get('nonce')!.length).toBeGreaterThanOrEqual(43);
    expect(jar.get(PUBLIC_URL, '__Host-stellwerk_oauth')).toBeTruthy();
  });

  it('logs a new person in end to end: creates the user with the default role and sets the session cookie', async () => {
    const { jar, finish } = await fullLogin(federatedAccountId, 'alice', '/dashboards/42?tab=map');
    expect(finish.statusCode).toBe(302);
    expect(finish.headers.location).toBe('/dashboards/42?tab=map');
    const cookie = setCookies(finish).find((c) => c.startsWith('__Host-stellwerk_session='));
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; SameSite=Lax/);

    const me = await stellwerkGet(jar, '/api/v1/user');
    expect(me.statusCode).toBe(200);
    const user = json<{ email: string; accountId: string; name: string; permissions: string[] }>(me);
    expect(user).toMatchObject({
      email: 'alice@federated.test',
      accountId: federatedAccountId,
      name: 'Alice Federated',
    });
    expect(user.permissions).toEqual(['all.read']);

    const stored = await t.withContext(() =>
      t.orm.em.fork().findOneOrFail(User, { email: 'alice@federated.test' }),
    );
    expect(stored.passwordHash).toBeNull();
    expect(await identitiesOf('alice@federated.test')).toBe(1);
  });

  it('refuses a replayed callback (state is single use)', async () => {
    const { jar, callback, finish } = await fullLogin(federatedAccountId, 'alice');
    expect(finish.statusCode).toBe(302);
    const replay = await stellwerkGet(jar, callback);
    expect(replay.statusCode).toBe(401);
    expect(json(replay)).toEqual({
      error: { code: 'OAUTH_STATE_INVALID', message: expect.any(String) as string, details: [] },
    });
  });

  it('links a second login to the same user instead of creating another', async () => {
    const first = await fullLogin(federatedAccountId, 'alice');
    const second = await fullLogin(federatedAccountId, 'alice');
    const ids = await Promise.all(
      [first.jar, second.jar].map(
        async (jar) => json<{ id: string }>(await stellwerkGet(jar, '/api/v1/user')).id,
      ),
    );
    expect(ids[0]).toBe(ids[1]);
    expect(await identitiesOf('alice@federated.test')).toBe(1);
    const count = await t.withContext(() => t.orm.em.fork().count(User, { email: 'alice@federated.test' }));
    expect(count).toBe(1);
  });

  it('does not link a new subject to an existing user when the provider has not verified the e-mail', async () => {
    const bob = await t.withContext(() =>
      t.services.users.create({
        accountId: federatedAccountId,
        email: 'bob@federated.test',
        password: 'a long password 123',
      }),
    );
    provider.users.set('bob-at-provider', { email: 'bob@federated.test', email_verified: false });
    const refused = await fullLogin(federatedAccountId, 'bob-at-provider');
    expect(refused.finish.statusCode).toBe(409);
    expect(json<{ error: { code: string } }>(refused.finish).error.code).toBe('FEDERATED_EMAIL_UNVERIFIED');
    expect(setCookies(refused.finish).some((c) => c.includes('stellwerk_session='))).toBe(false);
    expect(await identitiesOf('bob@federated.test')).toBe(0);

    // Verified: the same person is linked to the existing user, not duplicated.
    provider.users.set('bob-at-provider', { email: 'bob@federated.test', email_verified: true });
    const linked = await fullLogin(federatedAccountId, 'bob-at-provider');
    expect(linked.finish.statusCode).toBe(302);
    expect(json<{ id: string }>(await stellwerkGet(linked.jar, '/api/v1/user')).id).toBe(bob.id);
    expect(await identitiesOf('bob@federated.test')).toBe(1);
  });

  it('never links across accounts, and does not say that the e-mail belongs to another account', async () => {
    await t.withContext(() =>
      t.services.users.create({ accountId: otherAccountId, email: 'carol@other.test' }),
    );
    provider.users.set('carol', { email: 'carol@other.test', email_verified: true });
    const { finish } = await fullLogin(federatedAccountId, 'carol');
    expect(finish.statusCode).toBe(409);
    expect(json(finish)).toEqual(REFUSED);
    expect(await identitiesOf('carol@other.test')).toBe(0);
  });

  it('refuses an identity that is linked in another account with the very same answer', async () => {
    // alice is linked (same issuer and subject) to a user of "Federated Works".
    const { finish } = await fullLogin(noIssuerAccountId, 'alice');
    expect(finish.statusCode).toBe(409);
    expect(json(finish)).toEqual(REFUSED);
  });

  it('logs in through an account configured without issuer (identity from userinfo alone)', async () => {
    provider.users.set('dave', { email: 'dave@federated.test', email_verified: true });
    const { jar, finish } = await fullLogin(noIssuerAccountId, 'dave');
    expect(finish.statusCode).toBe(302);
    expect(finish.headers.location).toBe('/');
    const me = json<{ accountId: string }>(await stellwerkGet(jar, '/api/v1/user'));
    expect(me.accountId).toBe(noIssuerAccountId);
  });

  it('refuses a callback opened in another browser (login CSRF)', async () => {
    const callback = await throughProvider(new CookieJar(), federatedAccountId, 'alice');
    const response = await stellwerkGet(new CookieJar(), callback);
    expect(response.statusCode).toBe(401);
    expect(json<{ error: { code: string } }>(response).error.code).toBe('OAUTH_STATE_INVALID');
  });

  it('refuses a state older than 10 minutes', async () => {
    const jar = new CookieJar();
    const callback = await throughProvider(jar, federatedAccountId, 'alice');
    clockOffsetMs = 11 * 60_000;
    try {
      const response = await stellwerkGet(jar, callback);
      expect(response.statusCode).toBe(401);
      expect(json<{ error: { code: string } }>(response).error.code).toBe('OAUTH_STATE_INVALID');
    } finally {
      clockOffsetMs = 0;
    }
  });

  it("reports the provider's error and spends the state", async () => {
    const jar = new CookieJar();
    const start = await stellwerkGet(jar, `/api/v1/oauth2/authorize?accountId=${federatedAccountId}`);
    const state = new URL(start.headers.location as string).searchParams.get('state')!;
    const denied = await stellwerkGet(
      jar,
      `/api/v1/oauth2/callback?error=access_denied&error_description=nope&state=${state}`,
    );
    expect(denied.statusCode).toBe(400);
    expect(json(denied)).toEqual({
      error: {
        code: 'OAUTH_PROVIDER_ERROR',
        message: expect.any(String) as string,
        details: [{ error: 'access_denied', error_description: 'nope' }],
      },
    });
    const callback = await loginAtProvider(start.headers.location as string, 'alice', jar);
    const late = await stellwerkGet(jar, callback);
    expect(late.statusCode).toBe(401);
  });

  it('answers 404 for an account without OAuth configuration and refuses foreign returnTo targets', async () => {
    const jar = new CookieJar();
    const none = await stellwerkGet(jar, `/api/v1/oauth2/authorize?accountId=${otherAccountId}`);
    expect(none.statusCode).toBe(404);
    expect(json<{ error: { code: string } }>(none).error.code).toBe('NOT_FOUND');
    for (const returnTo of ['https://evil.example/', '//evil.example/x', '/\\evil.example', 'dashboards']) {
      const response = await stellwerkGet(
        jar,
        `/api/v1/oauth2/authorize?${new URLSearchParams({ accountId: federatedAccountId, returnTo }).toString()}`,
      );
      expect(response.statusCode, returnTo).toBe(400);
      expect(json<{ error: { code: string } }>(response).error.code).toBe('VALIDATION_ERROR');
    }
  });
});
