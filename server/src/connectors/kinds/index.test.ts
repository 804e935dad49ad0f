import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { DialOut } from '../../outgoing/dial/dial-out.js';
import { TargetGuard } from '../../outgoing/target-guard.js';
import { SecretBox } from '../../platform/crypto/secret-box.js';
import { buildKind, secretKeys } from './derive.js';
import { plannedKind } from './planned.kind.js';
import {
  CONNECTOR_KIND_DESCRIPTORS,
  createConnectorKinds,
  kindTypesWhere,
  MAIL_KIND_TYPES,
} from './index.js';

describe('connector kind registry', () => {
  const secretBox = new SecretBox(randomBytes(32));
  const deps = {
    mqttIn: { start: async () => {}, stop: async () => {}, publish: async () => {} },
    broker: { publishDownlink: async () => {} },
    links: { register: () => {}, start: async () => {}, stop: async () => {}, session: () => undefined },
    outgoing: {
      secretBox,
      dial: new DialOut(new TargetGuard([]), pino({ enabled: false })),
      log: pino({ enabled: false }),
    },
  };
  const kinds = createConnectorKinds(deps);

  it('names each kind once, in lower-case words joined by dashes', () => {
    const types = CONNECTOR_KIND_DESCRIPTORS.map((k) => k.type);
    expect(new Set(types).size).toBe(types.length);
    for (const type of types) expect(type).toMatch(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/);
  });

  it('seals every setting its schema marks write-only and masks it on reads', () => {
    for (const kind of kinds.values()) {
      for (const key of secretKeys(kind.descriptor.settings)) {
        const stored = kind.prepareConfig!({ [key]: 'clear text' }, undefined, { secretBox });
        expect(secretBox.open((stored[key] as { sealed: string }).sealed)).toBe('clear text');
        expect(kind.publicConfig!(stored)[key]).toBe('********');
      }
    }
    expect(secretKeys(kinds.get('smtp-mail')!.descriptor.settings)).toEqual([
      'password',
      'oauth2ClientSecret',
      'oauth2RefreshToken',
    ]);
  });

  it('marks kinds that do nothing yet with empty capabilities and seals their secrets', () => {
    // Free-form settings are the mark of a planned kind; every other kind does something.
    for (const kind of kinds.values())
      expect(kind.capabilities.length > 0, kind.type).toBe(kind.descriptor.freeForm !== true);
    expect(kinds.get('mqtt-in')!.capabilities).toContain('receives');
    expect(kinds.get('smtp-mail')!.capabilities).toContain('sends');
    // Built here, not taken from the registry: a planned kind is one the registry may no longer hold.
    const planned = buildKind(plannedKind('example', 'incoming', 'A kind named by the spec.'), deps);
    expect(planned.capabilities).toEqual([]);
    expect(planned.publicConfig!({ host: 'mail', password: { sealed: 'x' } })).toEqual({
      host: 'mail',
      password: '********',
    });
  });

  it('says how a connection-keeping kind is monitored, and what an outgoing kind delivers', () => {
    for (const kind of CONNECTOR_KIND_DESCRIPTORS) {
      expect(kind.monitoring !== undefined, kind.type).toBe(kind.capabilities.includes('monitoring'));
      expect(kind.delivers !== undefined, kind.type).toBe(kind.capabilities.includes('sends'));
    }
    // The lists that were written by hand: each still holds its kind, and only kinds that fit.
    expect(kindTypesWhere((k) => k.monitoring === 'connection')).toContain('mqtt-in');
    expect(kindTypesWhere((k) => k.monitoring === 'broker-clients')).toContain('mqtt-broker');
    expect(kindTypesWhere((k) => k.capabilities.includes('broker'))).toContain('mqtt-broker');
    expect(MAIL_KIND_TYPES).toContain('smtp-mail');
    expect(MAIL_KIND_TYPES).not.toContain('webhook-out');
    expect(kindTypesWhere((k) => k.delivers === 'http')).toContain('webhook-out');
    expect(kindTypesWhere((k) => k.delivers === 'mqtt')).toContain('mqtt-out');
  });
});
