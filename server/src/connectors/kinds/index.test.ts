import { describe, expect, it } from 'vitest';
import { CONNECTOR_TYPES, createConnectorKinds } from './index.js';

describe('connector kind registry', () => {
  const kinds = createConnectorKinds({ mqttIn: { start: async () => {}, stop: async () => {} } });

  it('lists exactly the registered kinds in the API schema', () => {
    expect([...kinds.keys()].sort()).toEqual([...CONNECTOR_TYPES].sort());
  });

  it('marks kinds that do nothing yet with empty capabilities and seals their secrets', () => {
    const implemented = [...kinds.values()].filter((k) => k.capabilities.length > 0).map((k) => k.type);
    expect(implemented.sort()).toEqual(['mqtt-broker', 'mqtt-in', 'tts-uplink', 'webhook-in']);
    const smtp = kinds.get('smtp')!;
    expect(smtp.publicConfig!({ host: 'mail', password: { sealed: 'x' } })).toEqual({
      host: 'mail',
      password: '********',
    });
  });
});
