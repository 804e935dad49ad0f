import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../platform/crypto/secret-box.js';
import { openSecret } from './config-fields.js';
import { buildKind } from './derive.js';
import { deviceKeyOf, mqttInKind } from './mqtt-in.kind.js';

const kind = buildKind(mqttInKind, {
  mqttIn: { start: async () => {}, stop: async () => {}, publish: async () => {} },
  broker: { publishDownlink: async () => {} },
  links: { register: () => {}, start: async () => {}, stop: async () => {}, session: () => undefined },
  outgoing: undefined as never,
});
const paths = (config: Record<string, unknown>) => kind.validate(config).map((p) => p.path);

describe('mqtt-in kind', () => {
  it('accepts a complete configuration', () => {
    expect(
      kind.validate({
        url: 'mqtts://broker.example:8883',
        topics: ['site/+/up', 'all/#'],
        qos: 1,
        clientId: 'stellwerk-1',
        clientCert: '-----BEGIN CERTIFICATE-----\n…',
        clientKey: '-----BEGIN PRIVATE KEY-----\n…',
        rejectUnauthorized: false,
      }),
    ).toEqual([]);
  });

  it('names every bad field', () => {
    expect(paths({ url: 'http://x', topics: ['a/#/b', 'a+/b'], qos: 2, rejectUnauthorized: 'no' })).toEqual([
      '/config/url',
      '/config/topics/0',
      '/config/topics/1',
      '/config/qos',
      '/config/rejectUnauthorized',
    ]);
    expect(paths({ url: 'mqtt://h', topics: [] })).toEqual(['/config/topics']);
    expect(paths({ url: 'mqtt://h', topics: ['t'], clientCert: '-----BEGIN CERTIFICATE-----' })).toEqual([
      '/config/clientKey',
    ]);
  });

  it('seals password and client key, keeps them when the mask comes back, masks them on reads', () => {
    const ctx = { secretBox: new SecretBox(randomBytes(32)) };
    const stored = kind.prepareConfig!({ url: 'mqtt://h', topics: ['t'], password: 'pw' }, undefined, ctx);
    expect(JSON.stringify(stored)).not.toContain('"pw"');
    expect(openSecret(stored, 'password', ctx)).toBe('pw');
    const again = kind.prepareConfig!({ url: 'mqtt://h2', topics: ['t'], password: '********' }, stored, ctx);
    expect(openSecret(again, 'password', ctx)).toBe('pw');
    expect(kind.publicConfig!(again)).toEqual({ url: 'mqtt://h2', topics: ['t'], password: '********' });
  });

  it('finds the device id in a topic segment or a payload field', () => {
    const msg = Buffer.from('{"dev":"d-1","n":5}');
    expect(deviceKeyOf({ url: '', topics: [] }, 'a/b/meter-1', msg)).toBe('meter-1');
    expect(deviceKeyOf({ url: '', topics: [], deviceIdTopicSegment: 1 }, 'a/b/up', msg)).toBe('b');
    expect(deviceKeyOf({ url: '', topics: [], deviceIdTopicSegment: 5 }, 'a/b', msg)).toBeUndefined();
    const byField = { url: '', topics: [], deviceIdSource: 'payload' as const, deviceIdField: 'dev' };
    expect(deviceKeyOf(byField, 't', msg)).toBe('d-1');
    expect(deviceKeyOf({ ...byField, deviceIdField: 'n' }, 't', msg)).toBe('5');
    expect(deviceKeyOf(byField, 't', Buffer.from([0xff, 0x00]))).toBeUndefined();
  });
});
