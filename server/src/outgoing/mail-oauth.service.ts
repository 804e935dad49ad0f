import type { MikroORM } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { ConnectorService } from '../connectors/connector.service.js';
import { Connector } from '../connectors/connector.entity.js';
import { openSecret } from '../connectors/kinds/config-fields.js';
import { smtpMailKind, type SmtpMailConfig } from '../connectors/kinds/smtp-mail.kind.js';
import type { SecretBox } from '../platform/crypto/secret-box.js';
import { randomToken } from '../platform/crypto/tokens.js';
import { AppError, errors } from '../platform/errors.js';
import { oauthEndpoints } from './mail-oauth.providers.js';
import { couldNotConnect, refusalOf } from './dial/connect-failure.js';
import type { DialOut } from './dial/dial-out.js';
import { TARGET_REFUSED } from './target-guard.js';

/**
 * OAuth 2.0 consent for smtp-mail connectors that log in to a hosted mail service (XOAUTH2).
 * `authorize` builds the provider's consent URL; the provider sends the browser back to
 * `/api/v1/oauth2/<mail_provider>/callback`, where the code is exchanged for a refresh token that
 * is stored sealed in the connector's settings (never returned: the API shows it masked).
 *
 * The `state` is the connector id, provider and expiry sealed with the server key: it cannot be
 * forged or altered, and it expires after STATE_TTL_MS, so no table is needed for it. The token
 * endpoint is tenant-set, so it is called through DialOut (SSRF protection).
 */

const STATE_TTL_MS = 10 * 60_000;

interface State {
  c: string;
  p: string;
  e: number;
  n: string;
}

export class MailOAuthService {
  constructor(
    private readonly deps: {
      orm: MikroORM;
      connectors: ConnectorService;
      secretBox: SecretBox;
      dial: DialOut;
      publicUrl: string;
    },
  ) {}

  redirectUri(provider: string): string {
    return `${this.deps.publicUrl.replace(/\/+$/, '')}/api/v1/oauth2/${provider}/callback`;
  }

  /** Caller checked connector.manage; the connector must be reachable and an OAuth smtp-mail one. */
  async authorize(
    principal: Principal,
    connectorId: string,
  ): Promise<{ authorizationUrl: string; redirectUri: string }> {
    const connector = await this.deps.connectors.get(principal, connectorId);
    const config = connector.config as unknown as SmtpMailConfig;
    // The consent flow belongs to the smtp-mail kind's own settings (oauth2Provider, refresh token).
    if (connector.type !== smtpMailKind.type || config.auth !== 'oauth2' || !config.oauth2Provider) {
      throw errors.unprocessable(
        'OAUTH2_NOT_CONFIGURED',
        'Only smtp-mail connectors with auth oauth2 and a provider use the consent flow',
        [{ connectorId }],
      );
    }
    const provider = config.oauth2Provider;
    const endpoints = oauthEndpoints(config);
    const state: State = { c: connector.id, p: provider, e: Date.now() + STATE_TTL_MS, n: randomToken(8) };
    const url = new URL(endpoints.authUrl);
    const redirectUri = this.redirectUri(provider);
    for (const [key, value] of Object.entries({
      response_type: 'code',
      client_id: config.oauth2ClientId ?? '',
      redirect_uri: redirectUri,
      scope: endpoints.scope,
      state: this.deps.secretBox.seal(JSON.stringify(state)),
      ...(config.username ? { login_hint: config.username } : {}),
      ...endpoints.authParams,
    })) {
      url.searchParams.set(key, value);
    }
    return { authorizationUrl: url.toString(), redirectUri };
  }

  /** The provider's redirect: stores the refresh token sealed; answers the connector id. */
  async callback(
    provider: string,
    query: { code?: string; state?: string; error?: string; error_description?: string },
  ): Promise<{ connectorId: string }> {
    if (query.error) {
      throw new AppError(
        'OAUTH_PROVIDER_ERROR',
        400,
        `The provider refused: ${query.error}${query.error_description ? ` (${query.error_description})` : ''}`,
      );
    }
    const state = this.openState(query.state);
    if (!state || state.p !== provider || state.e < Date.now()) {
      throw new AppError(
        'OAUTH_STATE_INVALID',
        401,
        'The state is unknown, expired or for another provider; start the consent again',
      );
    }
    if (!query.code) throw errors.validation('code is missing', [{ location: 'querystring', path: '/code' }]);
    const em = this.deps.orm.em.fork();
    const connector = await em.findOne(Connector, { id: state.c });
    if (!connector || connector.type !== smtpMailKind.type) throw errors.notFound('Connector', state.c);
    const config = connector.config as unknown as SmtpMailConfig;
    const refreshToken = await this.exchange(config, connector, provider, query.code);
    connector.config = {
      ...connector.config,
      oauth2RefreshToken: { sealed: this.deps.secretBox.seal(refreshToken) },
    };
    await em.flush();
    await this.deps.connectors.log(
      connector.id,
      'info',
      'OAuth 2.0 consent stored: the connector sends with the granted account',
      {
        provider,
      },
    );
    return { connectorId: connector.id };
  }

  private openState(text: string | undefined): State | undefined {
    if (!text) return undefined;
    try {
      const state = JSON.parse(this.deps.secretBox.open(text)) as Partial<State>;
      return typeof state.c === 'string' && typeof state.p === 'string' && typeof state.e === 'number'
        ? (state as State)
        : undefined;
    } catch {
      return undefined;
    }
  }

  private async exchange(
    config: SmtpMailConfig,
    connector: Connector,
    provider: string,
    code: string,
  ): Promise<string> {
    const { tokenUrl } = oauthEndpoints(config);
    let response: Response;
    let body: { refresh_token?: unknown; error?: unknown };
    try {
      response = await this.deps.dial.fetch(tokenUrl, {
        method: 'POST',
        headers: { accept: 'application/json' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: this.redirectUri(provider),
          client_id: config.oauth2ClientId ?? '',
          client_secret:
            openSecret(connector.config, 'oauth2ClientSecret', { secretBox: this.deps.secretBox }) ?? '',
        }),
        redirect: 'error',
        signal: AbortSignal.timeout(10_000),
      });
      body = (await response.json().catch(() => ({}))) as typeof body;
    } catch (error) {
      const refused = refusalOf(error);
      if (refused) throw errors.unprocessable(TARGET_REFUSED, refused.message);
      this.deps.dial.connectFailed(error, { connectorId: connector.id, target: new URL(tokenUrl).origin });
      throw new AppError('OAUTH_PROVIDER_UNREACHABLE', 502, couldNotConnect('the token endpoint'));
    }
    if (!response.ok || typeof body.refresh_token !== 'string') {
      throw new AppError(
        'OAUTH_PROVIDER_REJECTED',
        401,
        `The token endpoint answered ${response.status} without a refresh token${typeof body.error === 'string' ? ` (${body.error})` : ''}`,
      );
    }
    return body.refresh_token;
  }
}
