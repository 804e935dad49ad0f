import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { DialOut } from '../../outgoing/dial/dial-out.js';
import { TargetGuard } from '../../outgoing/target-guard.js';
import { SecretBox } from '../../platform/crypto/secret-box.js';
import { CONNECTOR_TYPES, createConnectorKinds } from './index.js';

describe('connector kind registry', () => {
  const kinds = createConnectorKinds({
    mqttIn: { start: async () => {}, stop: async () => {} },
    outgoing: {
      secretBox: new SecretBox(randomBytes(32)),
      dial: new DialOut(new TargetGuard([]), pino({ enabled: false })),
      log: pino({ enabled: false }),
    },
  });

  it('lists exactly the registered kinds in the API schema', () => {
    expect([...kinds.keys()].sort()).toEqual([...CONNECTOR_TYPES].sort());
  });

  it('marks kinds that do nothing yet with empty capabilities and seals their secrets', () => {
    const implemented = [...kinds.values()].filter((k) => k.capabilities.length > 0).map((k) => k.type);
    expect(implemented.sort()).toEqual([
      'kafka-out',
      'mqtt-broker',
      'mqtt-in',
      'mqtt-out',
      'smtp-mail',
      'tts-uplink',
      'webhook-in',
      'webhook-out',
    ]);
    const iec104 = kinds.get('iec104')!;
    expect(iec104.capabilities).toEqual([]);
    expect(iec104.publicConfig!({ host: 'mail', password: { sealed: 'x' } })).toEqual({
      host: 'mail',
      password: '********',
    });
  });
});
