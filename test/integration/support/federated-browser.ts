import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { CookieJar, loginAtProvider, type TestOidcProvider } from './oidc-provider.js';
import type { TestApp } from './test-app.js';

/**
 * A browser doing federated logins against a test app whose STELLWERK_PUBLIC_URL is `publicUrl`:
 * cookies per origin, the provider's pages played by `loginAtProvider`.
 */
export interface FederatedBrowser {
  jar: CookieJar;
  get(url: string | URL): Promise<LightMyRequestResponse>;
  post(url: string, payload: unknown): Promise<LightMyRequestResponse>;
  /** authorize → provider → Stellwerk's callback; returns the callback's answer. */
  login(accountId: string, login: string, returnTo?: string): Promise<LightMyRequestResponse>;
}

export const setCookiesOf = (response: LightMyRequestResponse): string[] => {
  const header = response.headers['set-cookie'];
  return header === undefined ? [] : [header].flat();
};

export function federatedBrowser(t: TestApp, publicUrl: string): FederatedBrowser {
  const jar = new CookieJar();
  const send = async (method: 'GET' | 'POST', url: string | URL, payload?: unknown) => {
    const target = new URL(url, publicUrl);
    const response = await t.app.inject({
      method,
      url: `${target.pathname}${target.search}`,
      // The console sends X-Requested-With with every state-changing call (CSRF check).
      headers: {
        cookie: jar.header(publicUrl),
        ...(method === 'POST' ? { 'x-requested-with': 'fetch' } : {}),
      },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    jar.store(publicUrl, setCookiesOf(response));
    return response;
  };
  return {
    jar,
    get: (url) => send('GET', url),
    post: (url, payload) => send('POST', url, payload),
    async login(accountId, login, returnTo) {
      const query = new URLSearchParams({ accountId, ...(returnTo ? { returnTo } : {}) });
      const start = await send('GET', `/api/v1/oauth2/authorize?${query.toString()}`);
      expect(start.statusCode, start.body).toBe(302);
      return send('GET', await loginAtProvider(start.headers.location as string, login, jar));
    },
  };
}

/** The OAuth configuration pointing at the test provider (with issuer: the ID token is validated). */
export const providerConfig = (
  provider: TestOidcProvider,
  publicUrl: string,
  extra: Record<string, unknown> = {},
) => ({
  scope: 'openid email profile',
  auth_uri: `${provider.issuer}/auth`,
  token_uri: `${provider.issuer}/token`,
  user_info_uri: `${provider.issuer}/me`,
  redirect_uri: `${publicUrl}/api/v1/oauth2/callback`,
  client_id: provider.clientId,
  client_secret: provider.clientSecret,
  issuer: provider.issuer,
  ...extra,
});

export const hasSessionCookie = (response: LightMyRequestResponse): boolean =>
  setCookiesOf(response).some((c) => /stellwerk_session=[^;]/.test(c));
