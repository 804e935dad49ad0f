import * as client from 'openid-client';
import type { StoredOAuthConfig } from '../../accounts/account.entity.js';
import { refusalOf } from '../../outgoing/dial/connect-failure.js';
import type { DialOut } from '../../outgoing/dial/dial-out.js';
import { errors } from '../../platform/errors.js';

/** Loopback hosts: the only ones openid-client may reach over plain http (not `*.localhost`: DNS may answer those). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** How long a provider may take for one call before the login fails. */
const PROVIDER_TIMEOUT_SECONDS = 10;
/** Token and userinfo answers are small; a provider that sends more is not one. */
const MAX_PROVIDER_ANSWER_BYTES = 256 * 1024;

/** What Stellwerk needs to talk to one account's provider. */
export interface ProviderClient {
  config: client.Configuration;
  /** Issuer part of the federated identity key. */
  issuer: string;
  /** An ID token is requested and validated (scope `openid` and an issuer to check it against). */
  validatesIdToken: boolean;
  /** The scope asks for OIDC; the userinfo reply then must carry `sub`. */
  oidc: boolean;
}

export const hasOpenIdScope = (scope: string): boolean => scope.split(/\s+/).includes('openid');

/**
 * Plain http is allowed only for loopback hosts (tests, a provider on the same machine):
 * anywhere else a code, client secret or access token would cross the network in clear.
 */
export function assertTransportAllowed(oauth: StoredOAuthConfig): boolean {
  let insecure = false;
  for (const field of ['auth_uri', 'token_uri', 'user_info_uri'] as const) {
    const url = new URL(oauth[field]);
    if (url.protocol === 'https:') continue;
    if (url.protocol !== 'http:' || !isLoopbackHost(url.hostname)) {
      throw errors.unprocessable(
        'OAUTH_INSECURE_ENDPOINT',
        `oauthConfig.${field} must use https (plain http is allowed only on localhost)`,
        [{ path: `/oauthConfig/${field}` }],
      );
    }
    insecure = true;
  }
  return insecure;
}

/**
 * The identity key's issuer: the configured one, else the origin of the userinfo endpoint
 * (the source of `sub`). Changing either later means existing links are matched by e-mail again.
 */
export const identityIssuer = (oauth: StoredOAuthConfig): string =>
  oauth.issuer?.replace(/\/+$/, '') ?? new URL(oauth.user_info_uri).origin;

/**
 * Builds the openid-client configuration from the account's OAuth configuration (no discovery, no
 * JWKS: only the token and userinfo endpoints are called). The endpoints are the tenant's, so
 * openid-client fetches through DialOut (SSRF protection with STELLWERK_OUTGOING_ALLOW_PRIVATE).
 */
export function providerClient(
  oauth: StoredOAuthConfig,
  clientSecret: string,
  dial: DialOut,
): ProviderClient {
  const insecure = assertTransportAllowed(oauth);
  const oidc = hasOpenIdScope(oauth.scope);
  const validatesIdToken = oidc && oauth.issuer !== undefined;
  const issuer = identityIssuer(oauth);
  const server: client.ServerMetadata = {
    issuer: oauth.issuer ?? issuer,
    authorization_endpoint: oauth.auth_uri,
    token_endpoint: oauth.token_uri,
    userinfo_endpoint: oauth.user_info_uri,
  };
  // client_secret_basic: RFC 6749 makes it mandatory for providers; client_secret_post is optional.
  const config = new client.Configuration(
    server,
    oauth.client_id,
    { client_secret: clientSecret },
    client.ClientSecretBasic(clientSecret),
  );
  config.timeout = PROVIDER_TIMEOUT_SECONDS;
  if (insecure) client.allowInsecureRequests(config);
  const throughDial = providerFetch(dial);
  config[client.customFetch] =
    oidc && !validatesIdToken ? withoutIdToken(throughDial, oauth.token_uri) : throughDial;
  return { config, issuer, validatesIdToken, oidc };
}

/**
 * openid-client's fetch, through DialOut. Every failure becomes `TypeError('fetch failed')` (a
 * refusal by the guard is its `cause`): openid-client passes TypeErrors on untouched, so a closed
 * port, a timeout, a TLS failure and a peer that is no HTTP server give the one 502 answer.
 */
function providerFetch(dial: DialOut): client.CustomFetch {
  return async (url, options) => {
    try {
      if (options.body instanceof ReadableStream) throw new Error('streamed request bodies are not sent');
      return await dial.fetch(url, {
        method: options.method,
        headers: options.headers,
        body: options.body ?? null,
        redirect: options.redirect,
        signal: options.signal ?? null,
        maxResponseBytes: MAX_PROVIDER_ANSWER_BYTES,
      });
    } catch (error) {
      if (!refusalOf(error))
        dial.connectFailed(error, { target: new URL(url).origin, purpose: 'oauth provider' });
      throw error instanceof TypeError ? error : new TypeError('fetch failed', { cause: error });
    }
  };
}

/**
 * Without a configured issuer an ID token cannot be validated (its `iss` has nothing to be
 * compared with), so it is dropped and the identity comes from the userinfo endpoint alone,
 * called with the access token this very token endpoint returned.
 */
function withoutIdToken(inner: client.CustomFetch, tokenUri: string): client.CustomFetch {
  return async (url, options) => {
    const response = await inner(url, options);
    if (url !== new URL(tokenUri).href || !response.ok) return response;
    const body = (await response.json()) as Record<string, unknown>;
    delete body.id_token;
    return Response.json(body, { status: response.status });
  };
}
