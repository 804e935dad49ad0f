import { describe, expect, it } from 'vitest';
import { CONNECTOR_TYPES } from '../connectors/kinds/index.js';
import { applyIdentityRules, identityRulesOf } from './device-references.js';

const device = (fields: { devEui?: string; endDeviceId?: string } = {}) => ({
  deviceId: 'Meter 7',
  devEui: fields.devEui ?? null,
  endDeviceId: fields.endDeviceId ?? null,
  externalId: null,
});

describe('device identity rules of connector kinds', () => {
  it('lower-cases EUIs for the LoRaWAN network-server kinds, and only for them', () => {
    const lowerCasing = CONNECTOR_TYPES.filter((type) => identityRulesOf(type).lowerCaseEui);
    const lorawan = ['chirpstack-mqtt', 'chirpstack-uplink', 'loriot-uplink', 'tts-uplink'];
    expect(lowerCasing.sort()).toEqual(lorawan);
    for (const type of lorawan) {
      const d = device({ devEui: '70B3D57ED0000001' });
      applyIdentityRules(d, identityRulesOf(type), true);
      expect(d.devEui).toBe('70b3d57ed0000001');
    }
    const byEui = { ...device(), deviceId: '70B3D57ED0000001' };
    applyIdentityRules(byEui, identityRulesOf('loriot-uplink'), true);
    expect(byEui.deviceId).toBe('70b3d57ed0000001');
    const named = { ...device(), deviceId: 'Meter-7' };
    applyIdentityRules(named, identityRulesOf('tts-uplink'), true);
    expect(named.deviceId).toBe('Meter-7');
    const plain = device({ devEui: '70B3D57ED0000001' });
    applyIdentityRules(plain, identityRulesOf('webhook-in'), true);
    expect(plain.devEui).toBe('70B3D57ED0000001');
  });

  it('makes a The Things Stack EndDevice ID only when asked and none is given', () => {
    const made = device({ devEui: '70B3D57ED0000001' });
    applyIdentityRules(made, identityRulesOf('tts-uplink'), true);
    expect(made.endDeviceId).toBe('eui-70b3d57ed0000001');
    const kept = device({ endDeviceId: 'meter-7' });
    applyIdentityRules(kept, identityRulesOf('tts-uplink'), true);
    expect(kept.endDeviceId).toBe('meter-7');
    const updated = device();
    applyIdentityRules(updated, identityRulesOf('tts-uplink'), false);
    expect(updated.endDeviceId).toBeNull();
  });

  it('reports the required fields a device lacks', () => {
    const rules = { required: ['devEui', 'externalId'] as const, lowerCaseEui: true, endDeviceId: false };
    expect(applyIdentityRules(device({ devEui: 'AA' }), rules, true)).toEqual(['externalId']);
    expect(applyIdentityRules(device(), identityRulesOf(undefined), true)).toEqual([]);
  });
});
