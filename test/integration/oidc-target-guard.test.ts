import net from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/mosquitto.js';
import {
  CookieJar,
  loginAtProvider,
  startOidcProvider,
  type TestOidcProvider,
} from './support/oidc-provider.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, json, type TestApp } from './support/test-app.js';

/**
 * The provider endpoints of an account's OAuth configuration are set by the tenant, so the server
 * reaches them through the SSRF protection (STELLWERK_OUTGOING_ALLOW_PRIVATE), and a provider that
 * cannot be reached gives one answer whatever the reason.
 */

const PUBLIC_URL = 'http://localhost:8080';
const CALLBACK = `${PUBLIC_URL}/api/v1/oauth2/callback`;

let provider: TestOidcProvider;
beforeAll(async () => {
  provider = await startOidcProvider(CALLBACK);
  provider.users.set('erin', { email: 'erin@guarded.test', email_verified: true });
});
afterAll(async () => {
  await provider?.close();
});

interface Endpoints {
  token_uri?: string;
  user_info_uri?: string;
}

async function accountWithProvider(t: TestApp, title: string, endpoints: Endpoints = {}): Promise<string> {
  const login = await t.app.inject({
    method: 'POST',
    url: '/xapi/v1/auth/login',
    payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
  });
  const admin = { authorization: `Bearer ${json<{ token: string }>(login).token}` };
  const created = await t.app.inject({
    method: 'POST',
    url: '/xapi/v1/accounts',
    headers: admin,
    payload: { title },
  });
  expect(created.statusCode, created.body).toBe(201);
  const id = json<{ id: string }>(created).id;
  const oauthConfig = {
    scope: 'openid email profile',
    auth_uri: `${provider.issuer}/auth`,
    token_uri: `${provider.issuer}/token`,
    user_info_uri: `${provider.issuer}/me`,
    redirect_uri: CALLBACK,
    client_id: provider.clientId,
    client_secret: provider.clientSecret,
    issuer: provider.issuer,
    ...endpoints,
  };
  const saved = await t.app.inject({
    method: 'PUT',
    url: `/xapi/v1/accounts/${id}`,
    headers: admin,
    payload: { oauthConfig },
  });
  expect(saved.statusCode, saved.body).toBe(200);
  return id;
}

async function get(t: TestApp, jar: CookieJar, url: string | URL): Promise<LightMyRequestResponse> {
  const target = new URL(url, PUBLIC_URL);
  const response = await t.app.inject({
    method: 'GET',
    url: `${target.pathname}${target.search}`,
    headers: { cookie: jar.header(PUBLIC_URL) },
  });
  const setCookie = response.headers['set-cookie'];
  jar.store(PUBLIC_URL, setCookie === undefined ? [] : [setCookie].flat());
  return response;
}

/** Authorize, sign in at the provider, and open the callback: the server then calls the provider. */
async function login(t: TestApp, accountId: string): Promise<LightMyRequestResponse> {
  const jar = new CookieJar();
  const start = await get(t, jar, `/api/v1/oauth2/authorize?accountId=${accountId}`);
  expect(start.statusCode, start.body).toBe(302);
  const callback = await loginAtProvider(start.headers.location as string, 'erin', jar);
  return get(t, jar, callback);
}

/** Authorize, then open the callback with a made-up code: the server calls the token endpoint. */
async function redeem(t: TestApp, accountId: string): Promise<LightMyRequestResponse> {
  const jar = new CookieJar();
  const start = await get(t, jar, `/api/v1/oauth2/authorize?accountId=${accountId}`);
  expect(start.statusCode, start.body).toBe(302);
  const state = new URL(start.headers.location as string).searchParams.get('state')!;
  return get(t, jar, `/api/v1/oauth2/callback?code=any-code&state=${encodeURIComponent(state)}`);
}

describe('federated login without STELLWERK_OUTGOING_ALLOW_PRIVATE', () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await createTestApp({
      env: { STELLWERK_PUBLIC_URL: PUBLIC_URL, STELLWERK_OUTGOING_ALLOW_PRIVATE: '' },
    });
  });
  afterAll(async () => {
    await strict?.close();
  });

  it('refuses a provider on loopback: the code is never redeemed there', async () => {
    const accountId = await accountWithProvider(strict, 'Strict Works');
    const finish = await login(strict, accountId);
    expect(finish.statusCode, finish.body).toBe(502);
    const body = json<{ error: { code: string; message: string } }>(finish);
    expect(body.error.code).toBe('OUTGOING_TARGET_REFUSED');
    expect(body.error.message).toContain('STELLWERK_OUTGOING_ALLOW_PRIVATE');
    expect(String(finish.headers['set-cookie'] ?? '')).not.toContain('stellwerk_session=');
  });

  it('refuses token endpoints on loopback by name, in IPv4-mapped form and on private addresses', async () => {
    const port = new URL(provider.issuer).port;
    for (const token_uri of [
      `http://localhost:${port}/token`,
      `https://[::ffff:7f00:1]:${port}/token`,
      'https://10.1.2.3/token',
      'https://169.254.169.254/token',
      'https://[fd00::1]/token',
    ]) {
      const accountId = await accountWithProvider(strict, `Strict ${token_uri}`, { token_uri });
      const finish = await redeem(strict, accountId);
      expect(finish.statusCode, token_uri).toBe(502);
      expect(json<{ error: { code: string } }>(finish).error.code, token_uri).toBe('OUTGOING_TARGET_REFUSED');
    }
  });
});

describe('federated login with the allowance (127.0.0.0/8)', () => {
  let t: TestApp;
  const servers: net.Server[] = [];
  beforeAll(async () => {
    t = await createTestApp({ env: { STELLWERK_PUBLIC_URL: PUBLIC_URL } });
  });
  afterAll(async () => {
    for (const server of servers) server.close();
    await t?.close();
  });

  const listen = async (onConnection: (socket: net.Socket) => void): Promise<number> => {
    const server = net.createServer((socket) => {
      socket.on('error', () => undefined);
      onConnection(socket);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as net.AddressInfo).port;
  };

  it('logs in through the allowed provider', async () => {
    const accountId = await accountWithProvider(t, 'Allowed Works');
    const finish = await login(t, accountId);
    expect(finish.statusCode, finish.body).toBe(302);
    expect(String(finish.headers['set-cookie'])).toContain('stellwerk_session=');
  });

  it('answers the same for a closed port, a port that is no HTTP server, a failed TLS handshake and a provider that never answers', async () => {
    const closed = await freePort();
    const notHttp = await listen((socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n'));
    const silent = await listen(() => undefined);
    const cases: Record<string, Endpoints> = {
      closedToken: { token_uri: `http://127.0.0.1:${closed}/token` },
      notHttpToken: { token_uri: `http://127.0.0.1:${notHttp}/token` },
      tlsToken: { token_uri: `https://127.0.0.1:${notHttp}/token` },
      // The provider's timeout for one call is 10 s.
      silentToken: { token_uri: `http://127.0.0.1:${silent}/token` },
    };
    const answers = await Promise.all(
      Object.entries(cases).map(async ([name, endpoints]) => {
        const accountId = await accountWithProvider(t, `Unreachable ${name}`, endpoints);
        const response = await redeem(t, accountId);
        return [name, { status: response.statusCode, body: json(response) }] as const;
      }),
    );
    // The userinfo endpoint is called after a real token exchange.
    const userinfoAccount = await accountWithProvider(t, 'Unreachable userinfo', {
      user_info_uri: `http://127.0.0.1:${closed}/me`,
    });
    const userinfo = await login(t, userinfoAccount);
    answers.push(['closedUserinfo', { status: userinfo.statusCode, body: json(userinfo) }]);

    const first = answers[0]![1];
    expect(first.status).toBe(502);
    for (const [name, answer] of answers) expect(answer, name).toEqual(first);
    expect(JSON.stringify(first.body)).not.toMatch(/ECONN|timed out|timeout|reset|TLS|SSL|127\.0\.0\.1/i);
  }, 40_000);
});
