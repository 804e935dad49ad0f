import * as client from 'openid-client';
import type { Account, StoredOAuthConfig } from '../../accounts/account.entity.js';
import type { AccountService } from '../../accounts/account.service.js';
import type { Config } from '../../config.js';
import { refusalOf } from '../../outgoing/dial/connect-failure.js';
import type { DialOut } from '../../outgoing/dial/dial-out.js';
import { TARGET_REFUSED } from '../../outgoing/target-guard.js';
import { randomToken, safeEqual, sha256 } from '../../platform/crypto/tokens.js';
import { AppError, errors } from '../../platform/errors.js';
import type { CompletedLogin, FederatedCompletion } from './federated-completion.service.js';
import type { FederatedUserService, ProviderIdentity } from './federated-user.service.js';
import type { LoginStateService } from './login-state.service.js';
import { providerClient, type ProviderClient } from './oidc.client.js';
import { claimsMultiFactor } from './provider-mfa.js';
import { safeReturnTo } from './return-to.js';

export interface StartInput {
  accountId: string;
  returnTo?: string;
  /** The browser-binding cookie, if the browser already has one (several tabs share it). */
  binding?: string;
}

export interface CallbackInput {
  query: Record<string, string | undefined>;
  binding: string | undefined;
  /** The session cookie the browser still holds; revoked, so every login gets a new session id. */
  previousSessionToken: string | undefined;
  client: { ip?: string; userAgent?: string };
}

/** Signed in, or waiting for the user's Stellwerk code (the token goes into an HttpOnly cookie). */
export type CallbackResult = { signedIn: CompletedLogin } | { secondFactorToken: string };

const MAX_CLAIM_LENGTH = 500;

const stateInvalid = (message: string) => new AppError('OAUTH_STATE_INVALID', 401, message);

/**
 * Federated login with the OAuth 2.0 authorization-code flow (+ PKCE, + OIDC when the scope
 * asks for it) against the provider in an account's OAuth configuration. Public: the caller is
 * the browser of someone not yet logged in. See docs/federated-login.md.
 */
export class OidcService {
  constructor(
    private readonly config: Config,
    private readonly accounts: AccountService,
    private readonly states: LoginStateService,
    private readonly federatedUsers: FederatedUserService,
    private readonly completion: FederatedCompletion,
    private readonly dial: DialOut,
  ) {}

  /** Stores state, nonce and PKCE verifier and returns the provider's authorization URL. */
  async start(input: StartInput): Promise<{ redirectUrl: string; binding: string }> {
    const returnTo = safeReturnTo(input.returnTo, this.config.publicUrl);
    const { account, oauth } = await this.oauthAccount(input.accountId);
    const provider = providerClient(oauth, this.clientSecret(account), this.dial);
    const binding = input.binding && input.binding.length <= 100 ? input.binding : randomToken();
    const codeVerifier = client.randomPKCECodeVerifier();
    const nonce = provider.validatesIdToken ? client.randomNonce() : null;
    const state = await this.states.create({ accountId: account.id, binding, codeVerifier, nonce, returnTo });
    const params: Record<string, string> = {
      response_type: 'code',
      redirect_uri: oauth.redirect_uri,
      scope: oauth.scope,
      state,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      ...(nonce ? { nonce } : {}),
    };
    return { redirectUrl: client.buildAuthorizationUrl(provider.config, params).href, binding };
  }

  /**
   * Checks the state (single use, 10 minutes, same browser), redeems the code, reads the
   * userinfo, finds or creates the user and issues a console session, unless the user owes
   * Stellwerk's second factor (docs/adr/0031): then the login waits for the code.
   */
  async callback(input: CallbackInput): Promise<CallbackResult> {
    const { query } = input;
    if (query.error) {
      // The login is over either way; its state must not stay usable.
      if (query.state) await this.states.consume(query.state);
      throw new AppError('OAUTH_PROVIDER_ERROR', 400, `The provider refused the login: ${query.error}`, [
        { error: query.error, error_description: query.error_description ?? null },
      ]);
    }
    if (!query.code || !query.state) {
      throw errors.validation('The callback needs code and state parameters', [{ location: 'querystring' }]);
    }
    const pending = await this.states.consume(query.state);
    if (!pending) throw stateInvalid('Unknown, used or expired login state; start the login again');
    if (!input.binding || !safeEqual(sha256(input.binding), pending.bindingHash)) {
      throw stateInvalid('This login was started in another browser; start the login again');
    }

    const { account, oauth } = await this.oauthAccount(pending.accountId);
    const provider = providerClient(oauth, this.clientSecret(account), this.dial);
    const callbackUrl = new URL(oauth.redirect_uri);
    for (const name of ['code', 'state', ...(provider.validatesIdToken ? ['iss'] : [])]) {
      const value = query[name];
      if (value !== undefined) callbackUrl.searchParams.set(name, value);
    }
    const identity = await providerCall(async () => {
      const tokens = await client.authorizationCodeGrant(provider.config, callbackUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: query.state,
        ...(pending.nonce ? { expectedNonce: pending.nonce } : {}),
      });
      return this.identity(provider, oauth, tokens);
    });

    const { user, pendingLink } = await this.federatedUsers.resolve(account, oauth, identity);
    if (!user.active) throw errors.forbidden('USER_DEACTIVATED', 'This user is deactivated');
    // The provider controls its claims: its MFA counts only where the account's admin trusts it.
    const providerMfa = oauth.trust_provider_mfa === true && identity.multiFactor;
    if (!providerMfa && user.totpEnabled) {
      return {
        secondFactorToken: await this.completion.awaitSecondFactor(user, pendingLink, pending.returnTo),
      };
    }
    if (!providerMfa && account.mandatoryTwoFactor && user.passwordHash) {
      throw errors.forbidden(
        'FEDERATED_TWO_FACTOR_SETUP_REQUIRED',
        'This account requires two-factor authentication: log in once with e-mail and password to set it up',
      );
    }
    return { signedIn: await this.completion.finish(user, pendingLink, pending.returnTo, input) };
  }

  /** Subject, e-mail and name from the userinfo endpoint (the ID token's `sub` must match it). */
  private async identity(
    provider: ProviderClient,
    oauth: StoredOAuthConfig,
    tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers,
  ): Promise<ProviderIdentity> {
    let info: Record<string, unknown>;
    if (provider.oidc) {
      const expected = provider.validatesIdToken ? tokens.claims()!.sub : client.skipSubjectCheck;
      info = await client.fetchUserInfo(provider.config, tokens.access_token, expected);
    } else {
      // Plain OAuth 2.0 providers answer with their own JSON, often an `id` instead of `sub`.
      const response = await client.fetchProtectedResource(
        provider.config,
        tokens.access_token,
        new URL(oauth.user_info_uri),
        'GET',
      );
      if (!response.ok) throw new ProviderResponseError(`userinfo answered HTTP ${response.status}`);
      info = (await response.json()) as Record<string, unknown>;
    }
    const amr = (provider.validatesIdToken ? tokens.claims()?.amr : undefined) ?? info.amr;
    const subject = claimText(info.sub) ?? claimText(info.id);
    if (!subject || subject.length > MAX_CLAIM_LENGTH) {
      throw new ProviderResponseError('userinfo carries no usable subject (sub)');
    }
    if (provider.issuer.length > MAX_CLAIM_LENGTH) throw new ProviderResponseError('issuer is too long');
    const email = typeof info.email === 'string' && info.email.includes('@') ? info.email : undefined;
    return {
      issuer: provider.issuer,
      subject,
      email,
      // Some providers send the flag as the string "true".
      emailVerified: info.email_verified === true || info.email_verified === 'true',
      name: typeof info.name === 'string' ? info.name : undefined,
      multiFactor: claimsMultiFactor(amr),
    };
  }

  private async oauthAccount(accountId: string): Promise<{ account: Account; oauth: StoredOAuthConfig }> {
    const account = await this.accounts.findById(accountId);
    if (!account?.oauthConfig) throw errors.notFound('OAuth configuration of account', accountId);
    // Without a recorded author nobody knows what the configuration may grant (docs/adr/0030).
    if (!account.oauthConfig.author) {
      throw errors.unprocessable(
        'OAUTH_CONFIG_UNCONFIRMED',
        "The account's OAuth configuration must be saved again by a holder of identityProvider.manage before it can be used",
      );
    }
    return { account, oauth: account.oauthConfig };
  }

  private clientSecret(account: Account): string {
    const secret = this.accounts.oauthClientSecret(account);
    if (!secret) throw errors.notFound('OAuth configuration of account', account.id);
    return secret;
  }
}

class ProviderResponseError extends Error {}

const claimText = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== ''
    ? value
    : typeof value === 'number' && Number.isSafeInteger(value)
      ? String(value)
      : undefined;

/**
 * Runs calls to the provider and turns their failures into coded errors: a refusal by the
 * provider or an invalid answer is 401 (the login failed), an unreachable provider 502, and so is
 * a provider address the SSRF protection refuses.
 */
async function providerCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (refusalOf(error)) {
      throw new AppError(
        TARGET_REFUSED,
        502,
        "The OAuth provider's address is loopback, private or link-local; an administrator can allow it with STELLWERK_OUTGOING_ALLOW_PRIVATE",
      );
    }
    if (error instanceof client.ResponseBodyError || error instanceof client.AuthorizationResponseError) {
      throw new AppError('OAUTH_PROVIDER_REJECTED', 401, `The provider refused the login: ${error.error}`, [
        { error: error.error, error_description: error.error_description ?? null },
      ]);
    }
    if (error instanceof client.WWWAuthenticateChallengeError) {
      throw new AppError(
        'OAUTH_PROVIDER_REJECTED',
        401,
        'The provider refused the access token at its userinfo endpoint',
      );
    }
    if (error instanceof client.ClientError || error instanceof ProviderResponseError) {
      throw new AppError(
        'OAUTH_RESPONSE_INVALID',
        401,
        `The provider's answer was not acceptable: ${error.message}`,
      );
    }
    const name = (error as Error | undefined)?.name;
    if (
      name === 'TimeoutError' ||
      name === 'AbortError' ||
      (error instanceof TypeError && error.message === 'fetch failed')
    ) {
      throw new AppError('OAUTH_PROVIDER_UNREACHABLE', 502, 'The OAuth provider could not be reached');
    }
    throw error;
  }
}
