/**
 * The settings form of the outgoing connector kinds (docs/outgoing-connectors.md): a flat draft of
 * text and check-box values the inputs bind to, built from a stored `config` and turned back into
 * the `config` the server checks. Secrets come back from the server as the mask; an empty secret
 * input sends the mask again, so the stored value is kept.
 */

export const OUTGOING_TYPES = ['webhook-out', 'mqtt-out', 'kafka-out', 'smtp-mail'] as const;
export type OutgoingType = (typeof OUTGOING_TYPES)[number];
export const isOutgoingType = (type: string): type is OutgoingType =>
  (OUTGOING_TYPES as readonly string[]).includes(type);

export const SECRET_MASK = '********';
export const WEBHOOK_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;
export const SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;
export const MAIL_PROVIDERS = ['google', 'microsoft', 'custom'] as const;

export interface HeaderRow {
  id: number;
  name: string;
  value: string;
}

export interface OutgoingDraft {
  // Delivery (every kind)
  queueSize: string;
  overflow: 'drop-newest' | 'drop-oldest';
  maxAttempts: string;
  retryDelayMs: string;
  // webhook-out
  url: string;
  method: string;
  headers: HeaderRow[];
  signingSecret: string;
  timeoutMs: string;
  // mqtt-out (url shared with webhook-out)
  topic: string;
  qos: string;
  retain: boolean;
  protocolVersion: string;
  clientId: string;
  mqttAuth: 'none' | 'password' | 'certificate';
  username: string;
  password: string;
  serverCa: string;
  clientCert: string;
  clientKey: string;
  acceptSelfSigned: boolean;
  // kafka-out (topic, clientId, serverCa, clientCert, clientKey shared)
  brokers: string;
  keyField: string;
  acks: string;
  ssl: boolean;
  saslMechanism: string;
  saslUsername: string;
  saslPassword: string;
  connectionTimeoutMs: string;
  // smtp-mail (username, password shared)
  host: string;
  port: string;
  security: 'starttls' | 'tls' | 'none';
  from: string;
  to: string;
  mailAuth: 'none' | 'password' | 'oauth2';
  oauth2Provider: string;
  oauth2ClientId: string;
  oauth2ClientSecret: string;
  oauth2AuthUrl: string;
  oauth2TokenUrl: string;
  oauth2Scope: string;
  /** Secrets the server holds already (shown as "stored"; an empty input keeps them). */
  stored: Set<string>;
}

let nextRow = 1;
export const headerRow = (name = '', value = ''): HeaderRow => ({ id: nextRow++, name, value });

const text = (value: unknown, fallback = ''): string =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : fallback;

/** The form's values for a stored config (or the defaults of a new connector). */
export function outgoingDraft(config: Record<string, unknown> = {}): OutgoingDraft {
  const stored = new Set(Object.keys(config).filter((key) => config[key] === SECRET_MASK));
  const headers =
    config.headers && typeof config.headers === 'object' ? (config.headers as Record<string, unknown>) : {};
  return {
    queueSize: text(config.queueSize),
    overflow: config.overflow === 'drop-oldest' ? 'drop-oldest' : 'drop-newest',
    maxAttempts: text(config.maxAttempts),
    retryDelayMs: text(config.retryDelayMs),
    url: text(config.url),
    method: text(config.method, 'POST'),
    headers: Object.entries(headers).map(([name, value]) => headerRow(name, text(value))),
    signingSecret: '',
    timeoutMs: text(config.timeoutMs),
    topic: text(config.topic),
    qos: text(config.qos, '1'),
    retain: config.retain === true,
    protocolVersion: text(config.protocolVersion, '4'),
    clientId: text(config.clientId),
    mqttAuth: config.clientCert ? 'certificate' : config.username ? 'password' : 'none',
    username: text(config.username),
    password: '',
    serverCa: text(config.serverCa),
    clientCert: text(config.clientCert),
    clientKey: '',
    acceptSelfSigned: config.rejectUnauthorized === false,
    brokers: Array.isArray(config.brokers) ? config.brokers.join(', ') : '',
    keyField: text(config.keyField),
    acks: text(config.acks, '-1'),
    ssl: config.ssl === true,
    saslMechanism: text(config.saslMechanism),
    saslUsername: text(config.saslUsername),
    saslPassword: '',
    connectionTimeoutMs: text(config.connectionTimeoutMs),
    host: text(config.host),
    port: text(config.port),
    security: config.security === 'tls' || config.security === 'none' ? config.security : 'starttls',
    from: text(config.from),
    to: Array.isArray(config.to) ? config.to.join(', ') : '',
    mailAuth:
      config.auth === 'oauth2' || config.auth === 'none' || config.auth === 'password'
        ? config.auth
        : config.username
          ? 'password'
          : 'none',
    oauth2Provider: text(config.oauth2Provider, 'google'),
    oauth2ClientId: text(config.oauth2ClientId),
    oauth2ClientSecret: '',
    oauth2AuthUrl: text(config.oauth2AuthUrl),
    oauth2TokenUrl: text(config.oauth2TokenUrl),
    oauth2Scope: text(config.oauth2Scope),
    stored,
  };
}

/** A secret as the server wants it: the new value, the mask to keep the stored one, or absent. */
function secret(draft: OutgoingDraft, key: keyof OutgoingDraft, value: string): string | undefined {
  if (value) return value;
  return draft.stored.has(key) ? SECRET_MASK : undefined;
}

/** A stored secret the chosen login no longer uses: null removes it (absent would keep it). */
function drop(draft: OutgoingDraft, key: string): null | undefined {
  return draft.stored.has(key) ? null : undefined;
}

/** Numbers typed into the form; what is not a number goes to the server as typed, which names it. */
function number(value: string): number | string | undefined {
  const trimmed = value.trim();
  if (!trimmed) return undefined;
  return /^-?\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
}

const list = (value: string): string[] =>
  value
    .split(/[\s,;]+/)
    .map((item) => item.trim())
    .filter(Boolean);

function compact(config: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(config).filter(([, value]) => value !== undefined && value !== ''),
  );
}

/** The `config` the server checks, for `type`. */
export function outgoingConfig(type: OutgoingType, draft: OutgoingDraft): Record<string, unknown> {
  const delivery = {
    queueSize: number(draft.queueSize),
    overflow: draft.overflow,
    maxAttempts: number(draft.maxAttempts),
    retryDelayMs: number(draft.retryDelayMs),
  };
  const tls = {
    serverCa: draft.serverCa.trim() || undefined,
    rejectUnauthorized: draft.acceptSelfSigned ? false : undefined,
  };
  if (type === 'webhook-out') {
    const headers = Object.fromEntries(
      draft.headers.filter((row) => row.name.trim()).map((row) => [row.name.trim(), row.value]),
    );
    return compact({
      url: draft.url.trim(),
      method: draft.method,
      headers: Object.keys(headers).length > 0 ? headers : undefined,
      signingSecret: secret(draft, 'signingSecret', draft.signingSecret.trim()),
      timeoutMs: number(draft.timeoutMs),
      ...delivery,
    });
  }
  if (type === 'mqtt-out') {
    const certificate = draft.mqttAuth === 'certificate';
    return compact({
      url: draft.url.trim(),
      topic: draft.topic.trim(),
      qos: Number(draft.qos),
      retain: draft.retain,
      protocolVersion: Number(draft.protocolVersion),
      clientId: draft.clientId.trim() || undefined,
      username: draft.mqttAuth === 'password' ? draft.username.trim() : undefined,
      password:
        draft.mqttAuth === 'password' ? secret(draft, 'password', draft.password) : drop(draft, 'password'),
      clientCert: certificate ? draft.clientCert.trim() : undefined,
      clientKey: certificate ? secret(draft, 'clientKey', draft.clientKey.trim()) : undefined,
      ...tls,
      ...delivery,
    });
  }
  if (type === 'kafka-out') {
    const sasl = draft.saslMechanism !== '';
    return compact({
      brokers: list(draft.brokers),
      topic: draft.topic.trim(),
      keyField: draft.keyField.trim() || undefined,
      acks: Number(draft.acks),
      clientId: draft.clientId.trim() || undefined,
      ssl: draft.ssl || undefined,
      ...(draft.ssl ? tls : {}),
      clientCert: draft.ssl ? draft.clientCert.trim() || undefined : undefined,
      clientKey:
        draft.ssl && draft.clientCert.trim() ? secret(draft, 'clientKey', draft.clientKey.trim()) : undefined,
      saslMechanism: sasl ? draft.saslMechanism : undefined,
      saslUsername: sasl ? draft.saslUsername.trim() : undefined,
      saslPassword: sasl ? secret(draft, 'saslPassword', draft.saslPassword) : drop(draft, 'saslPassword'),
      connectionTimeoutMs: number(draft.connectionTimeoutMs),
      ...delivery,
    });
  }
  const oauth = draft.mailAuth === 'oauth2';
  const custom = oauth && draft.oauth2Provider === 'custom';
  return compact({
    host: draft.host.trim(),
    port: number(draft.port),
    security: draft.security,
    rejectUnauthorized: draft.acceptSelfSigned ? false : undefined,
    from: draft.from.trim(),
    to: draft.to.trim() ? list(draft.to) : undefined,
    auth: draft.mailAuth,
    username: draft.mailAuth !== 'none' ? draft.username.trim() || undefined : undefined,
    password:
      draft.mailAuth === 'password' ? secret(draft, 'password', draft.password) : drop(draft, 'password'),
    oauth2Provider: oauth ? draft.oauth2Provider : undefined,
    oauth2ClientId: oauth ? draft.oauth2ClientId.trim() : undefined,
    oauth2ClientSecret: oauth
      ? secret(draft, 'oauth2ClientSecret', draft.oauth2ClientSecret)
      : drop(draft, 'oauth2ClientSecret'),
    // The refresh token comes from the consent flow only; the mask keeps it across other changes.
    oauth2RefreshToken:
      oauth && draft.stored.has('oauth2RefreshToken') ? SECRET_MASK : drop(draft, 'oauth2RefreshToken'),
    oauth2AuthUrl: custom ? draft.oauth2AuthUrl.trim() : undefined,
    oauth2TokenUrl: custom ? draft.oauth2TokenUrl.trim() : undefined,
    oauth2Scope: oauth ? draft.oauth2Scope.trim() || undefined : undefined,
    ...delivery,
  });
}

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64, made in the browser. */
export function generateSigningSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

/** The settings keys the server's problems name (`/config/url`, `config/headers/x`) → the input's id. */
export function problemField(path: string): string {
  const key = path.replace(/^\/?(config\/)?/, '').split('/')[0] ?? '';
  return key;
}
