/**
 * Hosted mail services whose SMTP accepts OAuth 2.0 (XOAUTH2). `custom` takes the URLs from the
 * connector (`oauth2AuthUrl`, `oauth2TokenUrl`); the others may override them the same way.
 */

export const MAIL_OAUTH_PROVIDERS = ['google', 'microsoft', 'custom'] as const;
export type MailOAuthProvider = (typeof MAIL_OAUTH_PROVIDERS)[number];

interface ProviderDefaults {
  authUrl: string;
  tokenUrl: string;
  scope: string;
  /** Asks for a refresh token (offline access) where the provider needs extra parameters. */
  authParams: Record<string, string>;
}

const DEFAULTS: Record<Exclude<MailOAuthProvider, 'custom'>, ProviderDefaults> = {
  google: {
    authUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    tokenUrl: 'https://oauth2.googleapis.com/token',
    scope: 'https://mail.google.com/',
    authParams: { access_type: 'offline', prompt: 'consent' },
  },
  microsoft: {
    authUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
    tokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
    scope: 'https://outlook.office.com/SMTP.Send offline_access',
    authParams: { prompt: 'consent' },
  },
};

export interface MailOAuthSettings {
  oauth2Provider?: MailOAuthProvider;
  oauth2AuthUrl?: string;
  oauth2TokenUrl?: string;
  oauth2Scope?: string;
}

export function oauthEndpoints(config: MailOAuthSettings): ProviderDefaults {
  const base =
    config.oauth2Provider && config.oauth2Provider !== 'custom'
      ? DEFAULTS[config.oauth2Provider]
      : { authUrl: '', tokenUrl: '', scope: '', authParams: {} };
  return {
    authUrl: config.oauth2AuthUrl ?? base.authUrl,
    tokenUrl: config.oauth2TokenUrl ?? base.tokenUrl,
    scope: config.oauth2Scope ?? base.scope,
    authParams: base.authParams,
  };
}
