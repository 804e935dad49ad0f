import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type OidcAccount } from 'oidc-provider';

/** Claims the provider hands out for one login name (its `sub`). */
export interface ProviderUser {
  email?: string;
  email_verified?: boolean;
  name?: string;
  /** Authentication methods (RFC 8176) the provider reports for this person's logins, e.g. `['mfa']`. */
  amr?: string[];
}

export interface TestOidcProvider {
  /** `http://127.0.0.1:<port>`: also the issuer. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Login name (= subject) → claims; tests add people as they need them. */
  users: Map<string, ProviderUser>;
  close(): Promise<void>;
}

/**
 * A real OpenID Provider (panva's oidc-provider, certified) on 127.0.0.1 with one confidential
 * client whose only redirect URI is Stellwerk's callback. Its development interactions render
 * a login form (any password) and a consent form, which `loginAtProvider` fills in.
 */
export async function startOidcProvider(redirectUri: string): Promise<TestOidcProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'stellwerk-test';
  const clientSecret = randomBytes(24).toString('base64url');
  const users = new Map<string, ProviderUser>();
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    findAccount: (_ctx: unknown, sub: string): OidcAccount | undefined => {
      const user = users.get(sub);
      return user ? { accountId: sub, claims: () => ({ sub, ...user }) } : undefined;
    },
    // `amr` with the openid scope: the provider reports it in userinfo, as some providers do.
    claims: { openid: ['sub', 'amr'], email: ['email', 'email_verified'], profile: ['name'] },
    features: { devInteractions: { enabled: true } },
    // Stellwerk must send PKCE even though it is a confidential client.
    pkce: { required: () => true },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    // Explicit lifetimes (seconds) keep the provider from printing a notice per default.
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
    jwks: { keys: [{ ...signingKey, use: 'sig', alg: 'RS256' }] },
  });
  server.on('request', provider.callback());

  return {
    issuer,
    clientId,
    clientSecret,
    users,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** Cookies per origin, as a browser would keep them (paths ignored: one test, one origin each). */
export class CookieJar {
  private readonly byOrigin = new Map<string, Map<string, string>>();

  store(url: string | URL, setCookies: string[]): void {
    const origin = new URL(url).origin;
    const jar = this.byOrigin.get(origin) ?? new Map<string, string>();
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      const expired = attributes.some(
        (a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a),
      );
      if (expired || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    this.byOrigin.set(origin, jar);
  }

  get(url: string | URL, name: string): string | undefined {
    return this.byOrigin.get(new URL(url).origin)?.get(name);
  }

  header(url: string | URL): string {
    return [...(this.byOrigin.get(new URL(url).origin) ?? [])].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * Plays the browser at the provider: follows its redirects, signs in as `login` on the login
 * form, confirms the consent form, and returns the URL the provider finally redirects to
 * (Stellwerk's callback with code and state) without calling it.
 */
export async function loginAtProvider(authorizationUrl: string, login: string, jar: CookieJar): Promise<URL> {
  let url = new URL(authorizationUrl);
  const provider = url.origin;
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 12; step += 1) {
    const response = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: jar.header(url),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(form ? { body: form.toString() } : {}),
    });
    jar.store(url, response.headers.getSetCookie());
    form = undefined;
    if (response.status >= 300 && response.status < 400) {
      const next = new URL(response.headers.get('location')!, url);
      if (next.origin !== provider) return next;
      url = next;
      continue;
    }
    const html = await response.text();
    if (response.status !== 200)
      throw new Error(`provider answered ${response.status} at ${url.pathname}: ${html}`);
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!prompt || !action)
      throw new Error(`unexpected provider page at ${url.pathname}: ${html.slice(0, 500)}`);
    url = new URL(action.replace(/&amp;/g, '&'), url);
    form = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any' } : { prompt });
  }
  throw new Error('the provider did not redirect back within 12 steps');
}
