import { describe, expect, it } from 'vitest';
import { flowBody, flowDraft, move, problemsOf, rowKey, type Flow } from './flow-form';
import {
  generateSigningSecret,
  headerRow,
  outgoingConfig,
  outgoingDraft,
  problemField,
  SECRET_MASK,
} from './outgoing-config';

describe('outgoing connector settings form', () => {
  it('turns a new webhook-out draft into the config the server checks', () => {
    const draft = outgoingDraft();
    draft.url = ' https://example.com/hook ';
    draft.method = 'PATCH';
    draft.headers = [headerRow('X-Api-Key', 'k1'), headerRow('  ', 'ignored')];
    draft.signingSecret = 'whsec_abc';
    draft.maxAttempts = '3';
    draft.retryDelayMs = 'soon';
    expect(outgoingConfig('webhook-out', draft)).toEqual({
      url: 'https://example.com/hook',
      method: 'PATCH',
      headers: { 'X-Api-Key': 'k1' },
      signingSecret: 'whsec_abc',
      overflow: 'drop-newest',
      maxAttempts: 3,
      // Not a number: sent as typed, so the server names the problem at the field.
      retryDelayMs: 'soon',
    });
  });

  it('keeps stored secrets with the mask and removes those the chosen login no longer uses', () => {
    const stored = outgoingDraft({
      url: 'mqtts://broker:8883',
      topic: 'plant/{{deviceId}}',
      qos: 2,
      username: 'u',
      password: SECRET_MASK,
      rejectUnauthorized: false,
    });
    expect(stored.mqttAuth).toBe('password');
    expect(stored.password).toBe('');
    expect(stored.acceptSelfSigned).toBe(true);
    expect(outgoingConfig('mqtt-out', stored)).toMatchObject({
      qos: 2,
      username: 'u',
      password: SECRET_MASK,
      rejectUnauthorized: false,
    });
    stored.mqttAuth = 'none';
    const none = outgoingConfig('mqtt-out', stored);
    expect(none.password).toBeNull();
    expect(none).not.toHaveProperty('username');
  });

  it('builds kafka-out and smtp-mail configs with lists and OAuth 2.0', () => {
    const kafka = outgoingDraft();
    kafka.brokers = 'k1:9092, k2:9092\nk3:9092';
    kafka.topic = 'events';
    kafka.saslMechanism = 'plain';
    kafka.saslUsername = 'svc';
    kafka.saslPassword = 'pw';
    expect(outgoingConfig('kafka-out', kafka)).toEqual({
      brokers: ['k1:9092', 'k2:9092', 'k3:9092'],
      topic: 'events',
      acks: -1,
      saslMechanism: 'plain',
      saslUsername: 'svc',
      saslPassword: 'pw',
      overflow: 'drop-newest',
    });

    const mail = outgoingDraft({
      host: 'smtp.example.com',
      from: 'a@example.com',
      to: ['b@example.com'],
      auth: 'oauth2',
      oauth2Provider: 'google',
      oauth2ClientId: 'id',
      oauth2ClientSecret: SECRET_MASK,
      oauth2RefreshToken: SECRET_MASK,
      username: 'a@example.com',
    });
    expect(mail.to).toBe('b@example.com');
    expect(outgoingConfig('smtp-mail', mail)).toMatchObject({
      auth: 'oauth2',
      to: ['b@example.com'],
      oauth2ClientSecret: SECRET_MASK,
      oauth2RefreshToken: SECRET_MASK,
    });
    mail.mailAuth = 'password';
    mail.password = 'secret';
    expect(outgoingConfig('smtp-mail', mail)).toMatchObject({
      password: 'secret',
      oauth2ClientSecret: null,
      oauth2RefreshToken: null,
    });
  });

  it('generates Standard Webhooks secrets and maps problem paths to fields', () => {
    const secret = generateSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(generateSigningSecret()).not.toBe(secret);
    expect(problemField('/config/url')).toBe('url');
    expect(problemField('/config/brokers/1')).toBe('brokers');
  });
});

describe('flow form', () => {
  const flow: Flow = {
    id: 'f1',
    accountId: 'a1',
    title: 'Hot',
    description: '',
    active: false,
    source: { type: 'alarms', categories: ['Konnektorüberwachung', 'Ops'] },
    steps: [
      { type: 'filter', id: 's1' },
      { type: 'transformer', id: 's2' },
    ],
    targets: [{ connectorId: 'c1', subject: 'Alert' }],
    permissionScopeIds: null,
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
  };

  it('round-trips a stored flow and switches the source kind cleanly', () => {
    const draft = flowDraft(flow);
    expect(draft.categories).toBe('Konnektorüberwachung, Ops');
    expect(flowBody(draft)).toEqual({
      title: 'Hot',
      description: '',
      active: false,
      source: { type: 'alarms', categories: ['Konnektorüberwachung', 'Ops'] },
      steps: [
        { type: 'filter', id: 's1' },
        { type: 'transformer', id: 's2' },
      ],
      targets: [{ connectorId: 'c1', subject: 'Alert' }],
    });
    draft.sourceType = 'packets';
    expect(flowBody(draft).source).toEqual({ type: 'packets', connectorIds: [], deviceIds: [] });
  });

  it('moves steps within bounds and reads problem paths', () => {
    const items = [1, 2, 3];
    expect(move(items, 0, -1)).toBe(false);
    expect(move(items, 2, -1)).toBe(true);
    expect(items).toEqual([1, 3, 2]);
    expect(move(items, 2, 1)).toBe(false);
    expect(rowKey()).not.toBe(rowKey());
    expect(
      problemsOf([
        { path: '/source/connectorIds', message: 'unknown' },
        { path: '/source/connectorIds', message: 'second' },
        { nothing: true },
      ]),
    ).toEqual(new Map([['/source/connectorIds', 'unknown']]));
  });
});
