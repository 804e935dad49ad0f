import { describe, expect, it } from 'vitest';
import { fieldOverride, shown } from './field-overrides';
import {
  problemField,
  SECRET_MASK,
  settingsConfig,
  settingsDraft,
  settingsFields,
  visibleFields,
} from './settings-form';

// Shaped like the outgoing kinds' settings the server serves (GET /xapi/v1/connector-kinds).
const secret = { anyOf: [{ type: 'string' }, { type: 'null' }], writeOnly: true };
const text = { type: 'string', maxLength: 500 };
const pem = { type: 'string', maxLength: 20000 };
const choice = (...values: Array<string | number>) => ({ anyOf: values.map((value) => ({ const: value })) });
const delivery = {
  queueSize: { type: 'integer' },
  overflow: choice('drop-newest', 'drop-oldest'),
  maxAttempts: { type: 'integer' },
  retryDelayMs: { type: 'integer' },
};
const webhook = settingsFields(
  {
    required: ['url'],
    properties: {
      url: { type: 'string', maxLength: 2000 },
      method: choice('POST', 'PUT', 'PATCH', 'DELETE'),
      headers: { type: 'object', patternProperties: { '^.*$': text } },
      signingSecret: secret,
      ...delivery,
    },
  },
  'webhook-out',
);
const kafka = settingsFields(
  {
    required: ['brokers', 'topic'],
    properties: {
      brokers: { type: 'array', items: text },
      topic: text,
      acks: choice(-1, 0, 1),
      ssl: { type: 'boolean' },
      serverCa: pem,
      clientCert: pem,
      clientKey: secret,
      rejectUnauthorized: { type: 'boolean' },
      saslMechanism: choice('plain', 'scram-sha-256'),
      saslUsername: text,
      saslPassword: secret,
      ...delivery,
    },
  },
  'kafka-out',
);
const mail = settingsFields(
  {
    required: ['host', 'from'],
    properties: {
      host: text,
      from: text,
      to: { type: 'array', items: text },
      auth: choice('none', 'password', 'oauth2'),
      username: text,
      password: secret,
      oauth2Provider: choice('google', 'microsoft', 'custom'),
      oauth2ClientSecret: secret,
      oauth2RefreshToken: secret,
      oauth2AuthUrl: text,
      oauth2Scope: text,
    },
  },
  'smtp-mail',
);
const keys = (fields: { key: string }[]) => fields.map((field) => field.key);

describe('connector form overrides', () => {
  it('takes the kind’s own entry over the one for every kind', () => {
    expect(fieldOverride('kafka-out', 'rejectUnauthorized')).toMatchObject({
      default: true,
      showWhen: { field: 'ssl' },
    });
    expect(fieldOverride('mqtt-in', 'rejectUnauthorized')).toEqual({ default: true });
    expect(fieldOverride('mqtt-in', 'url')).toEqual({});
    expect(fieldOverride('any', 'maxAttempts', { '*.maxAttempts': { group: 'delivery' } })).toEqual({
      group: 'delivery',
    });
  });

  it('shows a field while its condition holds and the field it looks at is shown', () => {
    const byKey = new Map([
      ['ssl', {}],
      ['clientCert', { showWhen: { field: 'ssl', in: [true] } }],
      ['clientKey', { showWhen: { field: 'clientCert', filled: true as const } }],
    ]);
    const key = byKey.get('clientKey')!;
    expect(shown(key, byKey, { ssl: true, clientCert: 'PEM' })).toBe(true);
    expect(shown(key, byKey, { ssl: true, clientCert: '  ' })).toBe(false);
    expect(shown(key, byKey, { ssl: false, clientCert: 'PEM' })).toBe(false);
    const loop = new Map([['a', { showWhen: { field: 'a', filled: true as const } }]]);
    expect(shown(loop.get('a')!, loop, { a: 'x' })).toBe(false);
  });

  it('turns a new webhook-out form into the config the server checks, with defaults', () => {
    const draft = settingsDraft(webhook);
    expect(draft).toMatchObject({ method: 'POST', overflow: 'drop-newest' });
    Object.assign(draft, {
      url: ' https://example.com/hook ',
      method: 'PATCH',
      headers: 'X-Api-Key: k1',
      signingSecret: 'whsec_abc',
      maxAttempts: 3,
      retryDelayMs: 'soon',
    });
    expect(settingsConfig(webhook, draft)).toEqual({
      url: 'https://example.com/hook',
      method: 'PATCH',
      headers: { 'X-Api-Key': 'k1' },
      signingSecret: 'whsec_abc',
      overflow: 'drop-newest',
      maxAttempts: 3,
      // Not a number: sent as typed, so the server names the problem at the field.
      retryDelayMs: 'soon',
    });
    // A URL gets one line; PEM texts (kafka-out serverCa) a text area.
    expect(webhook[0]!.kind).toBe('text');
    expect(kafka.find((field) => field.key === 'serverCa')!.kind).toBe('long-text');
    expect(webhook.filter((field) => field.group === 'delivery').map((field) => field.key)).toEqual(
      Object.keys(delivery),
    );
  });

  it('leaves out hidden settings, removes their stored secrets and keeps shown ones with the mask', () => {
    const stored = {
      brokers: ['k1:9092'],
      topic: 'events',
      ssl: true,
      clientCert: 'PEM',
      clientKey: SECRET_MASK,
      rejectUnauthorized: false,
      saslMechanism: 'plain',
      saslUsername: 'svc',
      saslPassword: SECRET_MASK,
    };
    const draft = settingsDraft(kafka, stored);
    expect(keys(visibleFields(kafka, draft))).toContain('clientKey');
    expect(settingsConfig(kafka, draft, stored)).toMatchObject({
      clientKey: SECRET_MASK,
      saslPassword: SECRET_MASK,
      rejectUnauthorized: false,
    });
    Object.assign(draft, { ssl: false, saslMechanism: '', brokers: 'k1:9092, k2:9092\nk3:9092' });
    const config = settingsConfig(kafka, draft, stored);
    expect(config).toMatchObject({
      brokers: ['k1:9092', 'k2:9092', 'k3:9092'],
      clientKey: null,
      saslPassword: null,
    });
    for (const key of ['clientCert', 'rejectUnauthorized', 'saslUsername', 'serverCa'])
      expect(config).not.toHaveProperty(key);
  });

  it('sends a flag at its default only when it was stored', () => {
    const draft = settingsDraft(kafka);
    expect(draft.rejectUnauthorized).toBe(true);
    Object.assign(draft, { brokers: 'k1:9092', topic: 'events', ssl: true });
    expect(settingsConfig(kafka, draft)).not.toHaveProperty('rejectUnauthorized');
    expect(settingsConfig(kafka, draft, { rejectUnauthorized: false })).toMatchObject({
      rejectUnauthorized: true,
    });
    expect(settingsConfig(kafka, { ...draft, rejectUnauthorized: false })).toMatchObject({
      rejectUnauthorized: false,
    });
  });

  it('keeps the OAuth 2.0 refresh token while OAuth is chosen and removes what another login leaves', () => {
    const stored = {
      host: 'smtp.example.com',
      from: 'a@example.com',
      to: ['b@example.com'],
      auth: 'oauth2',
      oauth2Provider: 'google',
      oauth2ClientSecret: SECRET_MASK,
      oauth2RefreshToken: SECRET_MASK,
      username: 'a@example.com',
    };
    const draft = settingsDraft(mail, stored);
    expect(keys(visibleFields(mail, draft))).not.toContain('oauth2AuthUrl');
    expect(keys(visibleFields(mail, { ...draft, oauth2Provider: 'custom' }))).toContain('oauth2AuthUrl');
    expect(settingsConfig(mail, draft, stored)).toMatchObject({
      auth: 'oauth2',
      to: ['b@example.com'],
      oauth2ClientSecret: SECRET_MASK,
      oauth2RefreshToken: SECRET_MASK,
    });
    Object.assign(draft, { auth: 'password', password: 'secret', to: 'b@example.com, c@example.com' });
    expect(settingsConfig(mail, draft, stored)).toMatchObject({
      to: ['b@example.com', 'c@example.com'],
      username: 'a@example.com',
      password: 'secret',
      oauth2ClientSecret: null,
      oauth2RefreshToken: null,
    });
    // Settings made through the API without `auth` keep their password login in the form.
    expect(keys(visibleFields(mail, settingsDraft(mail, { host: 'h', from: 'f', username: 'u' })))).toContain(
      'password',
    );
  });

  it('maps the server’s problem paths to settings', () => {
    expect(problemField('/config/url')).toBe('url');
    expect(problemField('/config/brokers/1')).toBe('brokers');
    expect(problemField('config/headers/X-Key')).toBe('headers');
  });
});
