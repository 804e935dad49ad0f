/**
 * What a kind's settings schema cannot say about its form, as data keyed by `kind.field` (`*.field`
 * for every kind): a widget of its own, a condition on another field's value, a default for a new
 * connector, a folded group. The form is still rendered from the schema
 * (docs/adr/0074-connector-kind-descriptors.md); a kind without entries gets the plain form.
 */

/** Widgets beyond the schema's: header rows, a secret with "Generate", a field kept but not shown. */
export type FieldWidget = 'headers' | 'signing-secret' | 'hidden';

/** Shown only while `field` is shown and its value is one of `in` (`''` is "not set"), or `filled`. */
export interface ShowWhen {
  field: string;
  in?: Array<string | boolean>;
  filled?: true;
}

export interface FieldOverride {
  widget?: FieldWidget;
  showWhen?: ShowWhen;
  /** The value of a new connector's field (a flag's value while unset). */
  default?: string | boolean;
  /** Rendered after the field: the OAuth 2.0 consent step of the mail kinds, the OPC UA node picker. */
  after?: 'oauth-connect' | 'opcua-browse';
  /** Folded under "Delivery: queue and retries". */
  group?: 'delivery';
  /** List items may also be separated by commas (one line of addresses or hosts). */
  commas?: true;
}

const delivery: FieldOverride = { group: 'delivery' };
const whenSsl: ShowWhen = { field: 'ssl', in: [true] };
const whenOAuth: ShowWhen = { field: 'auth', in: ['oauth2'] };

export const FIELD_OVERRIDES: Record<string, FieldOverride> = {
  '*.queueSize': delivery,
  '*.overflow': { ...delivery, default: 'drop-newest' },
  '*.maxAttempts': delivery,
  '*.retryDelayMs': delivery,
  '*.rejectUnauthorized': { default: true },

  'webhook-out.method': { default: 'POST' },
  'webhook-out.headers': { widget: 'headers' },
  'webhook-out.signingSecret': { widget: 'signing-secret' },

  'mqtt-out.qos': { default: '1' },
  'mqtt-out.protocolVersion': { default: '4' },
  'mqtt-out.password': { showWhen: { field: 'username', filled: true } },
  'mqtt-out.clientKey': { showWhen: { field: 'clientCert', filled: true } },

  'kafka-out.brokers': { commas: true },
  'kafka-out.acks': { default: '-1' },
  'kafka-out.serverCa': { showWhen: whenSsl },
  'kafka-out.clientCert': { showWhen: whenSsl },
  'kafka-out.clientKey': { showWhen: { field: 'clientCert', filled: true } },
  'kafka-out.rejectUnauthorized': { default: true, showWhen: whenSsl },
  'kafka-out.saslUsername': { showWhen: { field: 'saslMechanism', filled: true } },
  'kafka-out.saslPassword': { showWhen: { field: 'saslMechanism', filled: true } },

  'smtp-mail.security': { default: 'starttls' },
  'smtp-mail.rejectUnauthorized': {
    default: true,
    showWhen: { field: 'security', in: ['starttls', 'tls', ''] },
  },
  'smtp-mail.to': { commas: true },
  'smtp-mail.auth': { default: 'none' },
  // Unset `auth` (settings made through the API) logs in with a password when a username is set.
  'smtp-mail.username': { showWhen: { field: 'auth', in: ['password', 'oauth2', ''] } },
  'smtp-mail.password': { showWhen: { field: 'auth', in: ['password', ''] } },
  'smtp-mail.oauth2Provider': { default: 'google', showWhen: whenOAuth },
  'smtp-mail.oauth2ClientId': { showWhen: whenOAuth },
  'smtp-mail.oauth2ClientSecret': { showWhen: whenOAuth },
  // Set by the consent flow only: kept (the mask) while OAuth 2.0 is chosen, removed otherwise.
  'smtp-mail.oauth2RefreshToken': { widget: 'hidden', showWhen: whenOAuth },
  'smtp-mail.oauth2AuthUrl': { showWhen: { field: 'oauth2Provider', in: ['custom'] } },
  'smtp-mail.oauth2TokenUrl': { showWhen: { field: 'oauth2Provider', in: ['custom'] } },
  'smtp-mail.oauth2Scope': { showWhen: whenOAuth, after: 'oauth-connect' },
  'opcua.nodes': { after: 'opcua-browse' },
};

/** The override of `kind`'s `key`, the kind's own entry over the one for every kind. */
export function fieldOverride(
  kind: string,
  key: string,
  table: Record<string, FieldOverride> = FIELD_OVERRIDES,
): FieldOverride {
  return { ...table[`*.${key}`], ...table[`${kind}.${key}`] };
}

/**
 * Whether a field is shown for the values in `draft`: its condition holds and the field the condition
 * looks at is shown itself (a client key under a certificate under "use TLS").
 */
export function shown(
  field: { showWhen?: ShowWhen },
  byKey: ReadonlyMap<string, { showWhen?: ShowWhen }>,
  draft: Record<string, string | number | boolean | undefined>,
  depth = 0,
): boolean {
  const when = field.showWhen;
  if (!when) return true;
  const parent = byKey.get(when.field);
  if (depth > 10 || (parent && !shown(parent, byKey, draft, depth + 1))) return false;
  const value = draft[when.field] ?? '';
  if (when.filled) return typeof value === 'string' ? value.trim() !== '' : value !== false;
  return (when.in ?? []).includes(typeof value === 'boolean' ? value : String(value).trim());
}
