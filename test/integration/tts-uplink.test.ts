import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, errorCode, login, type Credentials } from './support/identity.js';
import { createConnector, packetsOf } from './support/connectors.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let t: TestApp;
let admin: Credentials;

beforeAll(async () => {
  t = await createTestApp();
  admin = bearer(await login(t));
});
afterAll(() => t.close());

/** An uplink message as The Things Stack v3 posts it (trimmed to the fields that matter). */
const uplink = (bytes: number[], ids: Record<string, string> = {}) => ({
  end_device_ids: {
    device_id: 'eui-70b3d57ed0000001',
    application_ids: { application_id: 'water-meters' },
    dev_eui: '70B3D57ED0000001',
    ...ids,
  },
  received_at: '2026-01-01T10:00:00Z',
  uplink_message: {
    f_port: 1,
    f_cnt: 42,
    frm_payload: Buffer.from(bytes).toString('base64'),
    rx_metadata: [{ gateway_ids: { gateway_id: 'gw-1' }, rssi: -80 }],
  },
});

const post = (url: string, payload: unknown) =>
  t.app.inject({ method: 'POST', url, payload: payload as object });

describe('The Things Stack uplinks', () => {
  it('stores the decoded frm_payload bytes under the lowercased DevEUI', async () => {
    const connector = await createConnector(t, admin, { type: 'tts-uplink' });
    const path = new URL(connector.apiEndpoint!).pathname;
    const response = await post(path, uplink([0x01, 0xff, 0x80, 0x00]));
    expect(response.statusCode, response.body).toBe(202);
    const [row] = await packetsOf(t, connector.id);
    expect(row!.device_key).toBe('70b3d57ed0000001');
    expect([...row!.payload]).toEqual([0x01, 0xff, 0x80, 0x00]);
  });

  it('can address devices by the end-device id instead', async () => {
    const connector = await createConnector(t, admin, {
      type: 'tts-uplink',
      config: { deviceIdFrom: 'device_id' },
    });
    const path = new URL(connector.apiEndpoint!).pathname;
    expect((await post(path, uplink([7], { device_id: 'Meter-7' }))).statusCode).toBe(202);
    expect((await packetsOf(t, connector.id))[0]!.device_key).toBe('meter-7');
  });

  it('accepts and ignores uplinks without application data; refuses broken ones', async () => {
    const connector = await createConnector(t, admin, { type: 'tts-uplink' });
    const path = new URL(connector.apiEndpoint!).pathname;
    // A MAC-only frame (port 0) has no frm_payload: nothing for a driver, and no retry wanted.
    const macOnly = await post(path, {
      end_device_ids: { dev_eui: 'AA' },
      uplink_message: { f_cnt: 3, rx_metadata: [{ gateway_ids: { gateway_id: 'gw-1' }, rssi: -80 }] },
    });
    expect(macOnly.statusCode).toBe(202);
    expect(macOnly.json()).toEqual({ accepted: 0 });
    expect(errorCode(await post(path, { end_device_ids: {}, uplink_message: { frm_payload: 'AQ==' } }))).toBe(
      'DEVICE_ID_MISSING',
    );
    const bad = await post(path, {
      end_device_ids: { dev_eui: 'AA' },
      uplink_message: { frm_payload: '%%%' },
    });
    expect(errorCode(bad)).toBe('INVALID_PAYLOAD');
    expect(await packetsOf(t, connector.id)).toHaveLength(0);
  });
});
