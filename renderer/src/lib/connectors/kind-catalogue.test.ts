import { describe, expect, it } from 'vitest';
import {
  COMMAND_MESSAGE,
  creatableKinds,
  issuedCredential,
  issuesCredentials,
  kindsDelivering,
  type ConnectorKindInfo,
} from './kind-catalogue';

const kind = (type: string, direction: 'incoming' | 'outgoing', capabilities: string[], delivers?: string) =>
  ({
    type,
    direction,
    summary: '',
    capabilities,
    settings: {},
    freeForm: false,
    devices: { required: [], lowerCaseEui: false, endDeviceId: false },
    ...(delivers ? { delivers } : {}),
  }) as ConnectorKindInfo;

// Shaped like the server's catalogue: the console's lists follow it, whatever the kinds are called.
const KINDS = [
  kind('mqtt-broker', 'incoming', ['broker', 'receives', 'monitoring']),
  kind('webhook-in', 'incoming', ['webhook', 'receives']),
  kind('mqtt-in', 'incoming', ['subscribe', 'receives', 'monitoring']),
  kind('webhook-out', 'outgoing', ['sends'], 'http'),
  kind('smtp-mail', 'outgoing', ['sends'], 'mail'),
  kind('relay-out', 'outgoing', ['sends'], 'http'),
  kind('lwm2m', 'incoming', []),
];

describe('connector kind catalogue', () => {
  it('offers the kinds that do something, by direction, in the server order', () => {
    expect(creatableKinds(KINDS, 'incoming')).toEqual(['mqtt-broker', 'webhook-in', 'mqtt-in']);
    expect(creatableKinds(KINDS, 'outgoing')).toEqual(['webhook-out', 'smtp-mail', 'relay-out']);
  });

  it('shows credentials once only for kinds that issue them', () => {
    const byType = new Map(KINDS.map((k) => [k.type, k]));
    expect(issuesCredentials(byType.get('mqtt-broker'))).toBe(true);
    expect(issuesCredentials(byType.get('webhook-in'))).toBe(true);
    expect(issuesCredentials(byType.get('mqtt-in'))).toBe(false);
    expect(issuesCredentials(byType.get('webhook-out'))).toBe(false);
    expect(issuesCredentials(undefined)).toBe(false);
  });

  it('names what new credentials replace for all devices of a connector', () => {
    const byType = new Map(KINDS.map((k) => [k.type, k]));
    expect(issuedCredential(byType.get('mqtt-broker'))).toBe('password');
    expect(issuedCredential(byType.get('webhook-in'))).toBe('webhook');
    expect(issuedCredential(byType.get('mqtt-in'))).toBeNull();
    expect(issuedCredential(undefined)).toBeNull();
  });

  it('lets a rule command use every kind delivering its message', () => {
    expect(kindsDelivering(KINDS, COMMAND_MESSAGE.webhook!)).toEqual(['webhook-out', 'relay-out']);
    expect(kindsDelivering(KINDS, COMMAND_MESSAGE.email!)).toEqual(['smtp-mail']);
    expect(kindsDelivering(KINDS, COMMAND_MESSAGE['mqtt-publish']!)).toEqual([]);
  });
});
