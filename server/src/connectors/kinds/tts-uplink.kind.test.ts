import { describe, expect, it } from 'vitest';
import { Connector } from '../connector.entity.js';
import { settingsValidator } from './derive.js';
import { ttsUplinkItems, ttsUplinkKind } from './tts-uplink.kind.js';

const connector = (config: Record<string, unknown> = {}) => Object.assign(new Connector(), { config });
const items = (body: unknown, config?: Record<string, unknown>) => ttsUplinkItems(body, connector(config));

describe('tts-uplink kind', () => {
  const uplink = {
    end_device_ids: { device_id: 'Eui-ABC', dev_eui: '70B3D57ED0000001' },
    uplink_message: { frm_payload: 'AQL/' },
  };

  it('decodes frm_payload and addresses the device by its lowercased DevEUI', () => {
    expect(items(uplink)).toEqual([{ deviceKey: '70b3d57ed0000001', payload: Buffer.from([1, 2, 255]) }]);
  });

  it('addresses by end-device id when configured', () => {
    expect(items(uplink, { deviceIdFrom: 'device_id' })[0]!.deviceKey).toBe('eui-abc');
  });

  it('ignores messages without frm_payload and refuses non-base64 payloads', () => {
    expect(items({ end_device_ids: { dev_eui: 'AA' }, join_accept: {} })).toEqual([]);
    expect(() => items({ ...uplink, uplink_message: { frm_payload: 'not base64!' } })).toThrow(/base64/);
    expect(() => items([uplink])).toThrow(/one JSON object/);
  });

  it('validates its settings', () => {
    const validate = settingsValidator(ttsUplinkKind);
    expect(validate({ deviceIdFrom: 'dev_eui' })).toEqual([]);
    expect(validate({ deviceIdFrom: 'eui' })).toEqual([
      { path: '/config/deviceIdFrom', message: 'must be one of "dev_eui", "device_id"' },
    ]);
  });
});
