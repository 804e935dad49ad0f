import { createHmac } from 'node:crypto';
import { SECRET_MASK } from '../../accounts/account.service.js';
import {
  connectionFailed,
  DeliveryError,
  encodeBody,
  type DeliveryContext,
  type OutgoingSender,
} from '../../outgoing/delivery.js';
import { PLAIN_DEVICES, type ConnectorKindDescriptor } from '../connector-kind.js';
import { Type } from 'typebox';
import { ConfigCheck, openSecret } from './config-fields.js';
import { deliveryFields, integer, oneOf, secret, settingsObject, text } from './settings-fields.js';

/**
 * Webhook (Outgoing): one HTTP request per message to `url` with `method` (POST, PUT, PATCH,
 * DELETE) and extra `headers`. With a `signingSecret` (`whsec_` + base64, Standard Webhooks) each
 * request carries `webhook-id` (the same for every retry of a message), `webhook-timestamp`
 * (seconds, new per attempt) and `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`.
 * 2xx is delivered; 408, 429, 5xx and targets that cannot be reached (one message whatever the
 * cause, delivery.ts connectionFailed) are retried by the dispatcher; other statuses and targets the
 * SSRF protection refuses (dial/dial-out.ts) are final. Redirects are not followed.
 */

export const WEBHOOK_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** Headers the connector sets itself; user headers may not replace them. */
const RESERVED_HEADERS =
  /^(host|content-length|content-type|transfer-encoding|connection|webhook-(id|timestamp|signature))$/i;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const SECRET_FORMAT = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

export interface WebhookOutConfig {
  url: string;
  method?: (typeof WEBHOOK_METHODS)[number];
  headers?: Record<string, string>;
  signingSecret?: { sealed: string };
  timeoutMs?: number;
}

/** Standard Webhooks signature header value for one attempt. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** Rules the settings schema cannot say: URL and address forms, PEM labels, settings that go together. */
function validate(config: Record<string, unknown>) {
  const check = new ConfigCheck(config);
  check.string('url', { required: true, maxLength: 2000 });
  if (typeof config.url === 'string') {
    let parsed: URL | undefined;
    try {
      parsed = new URL(config.url);
    } catch {
      check.problem('url', 'format', { format: 'http-url' }, 'must be an http:// or https:// URL');
    }
    if (parsed && !['http:', 'https:'].includes(parsed.protocol))
      check.problem('url', 'format', { format: 'http-url' }, 'must be http:// or https://');
    if (parsed && (parsed.username || parsed.password))
      check.custom('url', 'must not carry credentials; use headers');
  }
  const headers = config.headers;
  if (headers !== undefined) {
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
      check.problem(
        'headers',
        'type',
        { type: 'object' },
        'must be an object of header names and text values',
      );
    } else {
      const entries = Object.entries(headers);
      if (entries.length > 30)
        check.problem('headers', 'maxProperties', { limit: 30 }, 'must have at most 30 headers');
      for (const [name, value] of entries) {
        if (!HEADER_NAME.test(name) || RESERVED_HEADERS.test(name))
          check.custom(`headers/${name}`, 'is not a header name that may be set');
        else if (typeof value !== 'string' || value.length > 4000 || /[\r\n\0]/.test(value))
          check.custom(`headers/${name}`, 'must be text of at most 4000 characters on one line');
      }
    }
  }
  const secret = config.signingSecret;
  if (typeof secret === 'string' && secret !== SECRET_MASK && secret !== '') {
    if (!SECRET_FORMAT.test(secret) || Buffer.from(secret.slice(6), 'base64').length < 24) {
      check.custom(
        'signingSecret',
        'must be whsec_ followed by at least 24 bytes in base64 (Standard Webhooks)',
      );
    }
  }
  return check.problems;
}

function sender(ctx: DeliveryContext): OutgoingSender {
  return {
    async deliver(connector, message, { messageId }) {
      const config = connector.config as unknown as WebhookOutConfig;
      const url = new URL(config.url);
      const method = config.method ?? 'POST';
      const { text, contentType } = encodeBody(message.body);
      const headers: Record<string, string> = {
        'user-agent': 'Stellwerk-Webhook/1',
        ...config.headers,
        ...message.headers,
        'content-type': contentType,
      };
      const secret = openSecret(connector.config, 'signingSecret', ctx);
      if (secret) {
        const timestamp = Math.floor(Date.now() / 1000);
        headers['webhook-id'] = messageId;
        headers['webhook-timestamp'] = String(timestamp);
        headers['webhook-signature'] = signWebhook(secret, messageId, timestamp, text);
      }
      let status: number;
      try {
        const response = await ctx.dial.fetch(url, {
          method,
          headers,
          body: text,
          redirect: 'manual',
          signal: AbortSignal.timeout(config.timeoutMs ?? 10_000),
        });
        status = response.status;
        // Only the status counts; the body is not waited for.
        await response.body?.cancel();
      } catch (error) {
        throw connectionFailed(ctx, error, url.origin, { connectorId: connector.id, target: url.origin });
      }
      if (status >= 200 && status < 300) return;
      const retryable = status === 408 || status === 429 || status >= 500;
      throw new DeliveryError(
        `${method} ${url.origin}${url.pathname} answered ${status}`,
        retryable,
        `HTTP_${status}`,
      );
    },
    release: async () => undefined,
    close: async () => undefined,
  };
}

export const webhookOutKind: ConnectorKindDescriptor = {
  type: 'webhook-out',
  direction: 'outgoing',
  summary: 'One HTTP request per message, optionally signed (Standard Webhooks).',
  capabilities: ['sends'],
  delivers: 'http',
  settings: settingsObject(
    {
      url: text(2000, 'http:// or https:// URL, without credentials'),
      method: oneOf(WEBHOOK_METHODS),
      headers: Type.Record(Type.String(), text(4000), { description: 'Extra request headers (at most 30)' }),
      signingSecret: secret(200, 'whsec_ + base64 (Standard Webhooks)'),
      timeoutMs: integer(100, 60_000),
      ...deliveryFields(),
    },
    ['url'],
  ),
  check: validate,
  devices: PLAIN_DEVICES,
  runtime: ({ outgoing }) => ({ sender: sender(outgoing) }),
};
