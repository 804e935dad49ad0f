import type { Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import {
  MAIL_OAUTH_PROVIDERS,
  oauthEndpoints,
  type MailOAuthProvider,
} from '../../outgoing/mail-oauth.providers.js';
import {
  connectionFailed,
  DeliveryError,
  type DeliveryContext,
  type OutgoingSender,
} from '../../outgoing/delivery.js';
import { refusalOf } from '../../outgoing/dial/connect-failure.js';
import { refreshingAccessTokens } from '../../outgoing/mail-oauth.refresh.js';
import { PLAIN_DEVICES, type ConnectorKindDescriptor } from '../connector-kind.js';
import type { Connector } from '../connector.entity.js';
import { Type } from 'typebox';
import { ConfigCheck, openSecret } from './config-fields.js';
import { deliveryFields, flag, integer, oneOf, secret, settingsObject, text } from './settings-fields.js';

/**
 * SMTP mail (nodemailer): `host`, `port`, `security` (`starttls` default, `tls` for implicit TLS
 * on 465, `none`), `from`, default recipients `to`. Authentication `password` (`username`,
 * `password`) or `oauth2` for a hosted mail service (`oauth2Provider` google, microsoft or custom
 * with its URLs): the refresh token comes from the consent flow (`POST /xapi/v1/oauth2/mail/authorize`,
 * callback `/api/v1/oauth2/<mail_provider>/callback`) and is stored sealed like every secret.
 * A message's `subject` and `to` win over the connector's; its body is the text part (JSON unless
 * a string). SMTP 5xx answers, refused logins and bad addresses are final; the rest is retried.
 * The mail server and the token endpoint are reached through DialOut (SSRF protection); what the
 * mail server answered is logged, failing to reach it reads the same whatever the cause.
 */

const ADDRESS = /^[^\s@<>]+@[^\s@<>]+$/;
const FROM = /^([^<>\r\n]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/;

export interface SmtpMailConfig {
  host: string;
  port?: number;
  security?: 'starttls' | 'tls' | 'none';
  rejectUnauthorized?: boolean;
  from: string;
  to?: string[];
  auth?: 'none' | 'password' | 'oauth2';
  username?: string;
  password?: { sealed: string };
  oauth2Provider?: MailOAuthProvider;
  oauth2ClientId?: string;
  oauth2ClientSecret?: { sealed: string };
  oauth2RefreshToken?: { sealed: string };
  oauth2AuthUrl?: string;
  oauth2TokenUrl?: string;
  oauth2Scope?: string;
}

function checkUrl(check: ConfigCheck, config: Record<string, unknown>, key: string) {
  check.string(key, { maxLength: 500 });
  const value = config[key];
  if (typeof value === 'string' && !/^https?:\/\/[^\s/]+/.test(value))
    check.problem(key, 'format', { format: 'http-url' }, 'must be an http(s) URL');
}

/** Rules the settings schema cannot say: URL and address forms, PEM labels, settings that go together. */
function validate(config: Record<string, unknown>) {
  const check = new ConfigCheck(config);
  check.string('host', { required: true, maxLength: 255 });
  check.string('from', { required: true, maxLength: 300 });
  if (typeof config.from === 'string' && !FROM.test(config.from.trim()))
    check.problem('from', 'format', { format: 'mail-from' }, 'must be an address or Name <address>');
  const to = config.to;
  const toMessage = 'must be a list of at most 50 e-mail addresses';
  if (to !== undefined && !Array.isArray(to)) check.problem('to', 'type', { type: 'array' }, toMessage);
  else if (Array.isArray(to) && to.length > 50) check.problem('to', 'maxItems', { limit: 50 }, toMessage);
  else if (Array.isArray(to) && !to.every((a) => typeof a === 'string' && ADDRESS.test(a)))
    check.problem('to', 'format', { format: 'email' }, toMessage);
  checkUrl(check, config, 'oauth2AuthUrl');
  checkUrl(check, config, 'oauth2TokenUrl');
  if (config.auth === 'oauth2') {
    // What auth oauth2 makes required (a schema's if/then): `required`, as the schema would say.
    const required = (key: string, message: string, missingProperty = key) =>
      check.problem(key, 'required', { missingProperty }, message);
    if (config.oauth2Provider === undefined) required('oauth2Provider', 'is required with auth oauth2');
    if (typeof config.oauth2ClientId !== 'string') required('oauth2ClientId', 'is required with auth oauth2');
    if (typeof config.username !== 'string')
      required('username', 'is required with auth oauth2 (the mailbox)');
    if (
      config.oauth2Provider === 'custom' &&
      (config.oauth2AuthUrl === undefined || config.oauth2TokenUrl === undefined)
    )
      required(
        'oauth2TokenUrl',
        'a custom provider needs oauth2AuthUrl and oauth2TokenUrl',
        config.oauth2AuthUrl === undefined ? 'oauth2AuthUrl' : 'oauth2TokenUrl',
      );
  }
  return check.problems;
}

function authOf(connector: Connector, ctx: DeliveryContext): SMTPTransport.Options['auth'] | undefined {
  const config = connector.config as unknown as SmtpMailConfig;
  const mode = config.auth ?? (config.username ? 'password' : 'none');
  if (mode === 'none') return undefined;
  if (mode === 'password') {
    return { user: config.username ?? '', pass: openSecret(connector.config, 'password', ctx) ?? '' };
  }
  const refreshToken = openSecret(connector.config, 'oauth2RefreshToken', ctx);
  if (!refreshToken) {
    throw new DeliveryError(
      'OAuth 2.0 is not authorised yet: run the consent flow for this connector',
      false,
      'OAUTH2_NOT_AUTHORISED',
    );
  }
  return {
    type: 'OAuth2',
    user: config.username ?? '',
    provisionCallback: refreshingAccessTokens(ctx.dial, {
      tokenUrl: oauthEndpoints(config).tokenUrl,
      clientId: config.oauth2ClientId ?? '',
      clientSecret: openSecret(connector.config, 'oauth2ClientSecret', ctx) ?? '',
      refreshToken,
    }),
  };
}

/** nodemailer codes of failures that are not about reaching the server. */
const ANSWERED = ['EAUTH', 'EENVELOPE', 'EMESSAGE'];

/**
 * nodemailer's error → final (5xx, login refused, bad envelope) or retryable (the rest); one
 * message for every way of not reaching a mail server (connectionFailed).
 */
export function smtpDeliveryError(
  error: unknown,
  ctx: DeliveryContext,
  context: Record<string, unknown> = {},
): DeliveryError {
  if (error instanceof DeliveryError) return error;
  const e = error as { message?: string; code?: string; responseCode?: number };
  // nodemailer re-codes what it is handed (a refused token endpoint becomes EAUTH): refusals first.
  if (refusalOf(error) || (e.responseCode === undefined && !ANSWERED.includes(e.code ?? ''))) {
    return connectionFailed(ctx, error, 'the mail server', context);
  }
  const final = (e.responseCode !== undefined && e.responseCode >= 500) || ANSWERED.includes(e.code ?? '');
  return new DeliveryError(
    `SMTP: ${e.message ?? String(error)}`,
    !final,
    e.code ? `SMTP_${e.code}` : 'SMTP_ERROR',
  );
}

function sender(ctx: DeliveryContext): OutgoingSender {
  const transports = new Map<string, Transporter>();

  function transportFor(connector: Connector): Transporter {
    const existing = transports.get(connector.id);
    if (existing) return existing;
    const config = connector.config as unknown as SmtpMailConfig;
    const auth = authOf(connector, ctx);
    const security = config.security ?? 'starttls';
    const transport = ctx.dial.smtp({
      host: config.host,
      port: config.port ?? (security === 'tls' ? 465 : 587),
      secure: security === 'tls',
      requireTLS: security === 'starttls',
      ignoreTLS: security === 'none',
      tls: { rejectUnauthorized: config.rejectUnauthorized ?? true, servername: config.host },
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
      ...(auth ? { auth } : {}),
    });
    transports.set(connector.id, transport);
    return transport;
  }

  const release = async (connectorId: string) => {
    transports.get(connectorId)?.close();
    transports.delete(connectorId);
  };

  return {
    async deliver(connector, message) {
      const config = connector.config as unknown as SmtpMailConfig;
      const to = message.to?.length ? message.to : (config.to ?? []);
      if (to.length === 0)
        throw new DeliveryError(
          'No recipients: neither the message nor the connector names any',
          false,
          'NO_RECIPIENTS',
        );
      const transport = transportFor(connector);
      const text = typeof message.body === 'string' ? message.body : JSON.stringify(message.body, null, 2);
      try {
        await transport.sendMail({
          from: config.from,
          to,
          subject: message.subject ?? 'Stellwerk',
          text,
          ...(message.headers ? { headers: message.headers } : {}),
          ...(message.attachments ? { attachments: message.attachments } : {}),
        });
      } catch (error) {
        await release(connector.id);
        throw smtpDeliveryError(error, ctx, {
          connectorId: connector.id,
          target: `${config.host}:${config.port ?? ''}`,
        });
      }
    },
    release,
    async close() {
      await Promise.all([...transports.keys()].map(release));
    },
  };
}

export const smtpMailKind: ConnectorKindDescriptor = {
  type: 'smtp-mail',
  direction: 'outgoing',
  summary: 'Sends e-mail through an SMTP server (STARTTLS/TLS, password or OAuth 2.0 for hosted mail).',
  capabilities: ['sends'],
  delivers: 'mail',
  settings: settingsObject(
    {
      host: text(255),
      port: integer(1, 65535),
      security: oneOf(['starttls', 'tls', 'none'], 'starttls (default), tls for implicit TLS on 465, none'),
      rejectUnauthorized: flag('false accepts self-signed or otherwise unverifiable server certificates'),
      from: text(300, 'address or Name <address>'),
      to: Type.Array(text(300), { maxItems: 50, description: 'Default recipients' }),
      auth: oneOf(['none', 'password', 'oauth2']),
      username: text(300),
      password: secret(500),
      oauth2Provider: oneOf(MAIL_OAUTH_PROVIDERS),
      oauth2ClientId: text(500),
      oauth2ClientSecret: secret(1000),
      oauth2RefreshToken: secret(4000, 'Set by the consent flow (POST /xapi/v1/oauth2/mail/authorize)'),
      oauth2AuthUrl: text(500),
      oauth2TokenUrl: text(500),
      oauth2Scope: text(500),
      ...deliveryFields(),
    },
    ['host', 'from'],
  ),
  check: validate,
  devices: PLAIN_DEVICES,
  runtime: ({ outgoing }) => ({ sender: sender(outgoing) }),
};
