import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnector } from './support/connectors.js';
import { startFakePeer, type FakePeer } from './support/fake-network-server.js';
import { bearer, caller, expectStatus, login, type Credentials } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * `delete-remotely/true` deletes the device at its network server (The Things Stack's registries,
 * ChirpStack's device API, here a fake HTTP peer on loopback that answers like them), then here;
 * a refusal leaves the device `DeletionFailed` with the reason, and a PUT reactivates it.
 */

let t: TestApp;
let admin: Credentials;
let call: ReturnType<typeof caller>;
let peer: FakePeer;

beforeAll(async () => {
  t = await createTestApp();
  admin = bearer(await login(t));
  call = caller(t, admin);
  peer = await startFakePeer();
});
afterAll(async () => {
  await peer?.close();
  await t?.close();
});

interface DeviceBody {
  id: string;
  lifecycleState: string | null;
  lifecycleReason: string | null;
}

const createDevice = async (body: Record<string, unknown>) =>
  expectStatus<DeviceBody>(await call('POST', '/xapi/v1/virtual-devices', { title: 'meter', ...body }), 201);

const deleteRemotely = async (id: string) => {
  const marked = expectStatus<DeviceBody>(
    await call('DELETE', `/xapi/v1/virtual-devices/${id}/delete-remotely/true`),
    202,
  );
  expect(marked.lifecycleState).toBe('Deleting');
  await t.services.remoteDeletions.settled();
};

describe('remote device deletion', () => {
  it('deletes a device from The Things Stack registries in reverse order of registration, then here', async () => {
    const tts = await createConnector(t, admin, {
      type: 'tts-uplink',
      config: { applicationId: 'water-app', webhookId: 'wh', apiUrl: peer.url, apiKey: 'NNSXS.KEY' },
    });
    const device = await createDevice({
      connectorId: tts.id,
      device_id: 'a1b2c3d4e5f60718',
      devEui: 'A1B2C3D4E5F60718',
      endDeviceId: 'meter-a1',
    });
    peer.requests.length = 0;
    // ABP devices have no Join Server entry: its 404 counts as deleted.
    peer.replies.push(
      { status: 200, body: {} },
      { status: 200, body: {} },
      { status: 404, body: { code: 5 } },
    );
    await deleteRemotely(device.id);
    expect(peer.requests.map((r) => `${r.method} ${r.url} ${r.authorization}`)).toEqual([
      'DELETE /api/v3/as/applications/water-app/devices/meter-a1 Bearer NNSXS.KEY',
      'DELETE /api/v3/ns/applications/water-app/devices/meter-a1 Bearer NNSXS.KEY',
      'DELETE /api/v3/js/applications/water-app/devices/meter-a1 Bearer NNSXS.KEY',
      'DELETE /api/v3/applications/water-app/devices/meter-a1 Bearer NNSXS.KEY',
    ]);
    expect((await call('GET', `/xapi/v1/virtual-devices/${device.id}`)).statusCode).toBe(404);
  });

  it('shows why ChirpStack refused, and a device can be reactivated from there', async () => {
    const chirpstack = await createConnector(t, admin, {
      type: 'chirpstack-uplink',
      config: { apiUrl: peer.url, apiToken: 'cs-token' },
    });
    const device = await createDevice({ connectorId: chirpstack.id, device_id: '0303030303030303' });
    peer.requests.length = 0;
    peer.replies.push({ status: 403, body: { code: 7, message: 'permission denied' } });
    await deleteRemotely(device.id);
    expect(peer.requests.map((r) => `${r.method} ${r.url} ${r.authorization}`)).toEqual([
      'DELETE /api/devices/0303030303030303 Bearer cs-token',
    ]);
    const failed = expectStatus<DeviceBody>(await call('GET', `/xapi/v1/virtual-devices/${device.id}`), 200);
    expect(failed.lifecycleState).toBe('DeletionFailed');
    expect(failed.lifecycleReason).toContain('answered 403: permission denied');

    const back = expectStatus<DeviceBody>(
      await call('PUT', `/xapi/v1/virtual-devices/${device.id}`, { reactivate: true }),
      200,
    );
    expect(back).toMatchObject({ lifecycleState: null, lifecycleReason: null });

    await deleteRemotely(device.id);
    expect((await call('GET', `/xapi/v1/virtual-devices/${device.id}`)).statusCode).toBe(404);
  });

  it('fails at once for a connector that cannot delete devices at a network server', async () => {
    const hook = await createConnector(t, admin, { type: 'webhook-in' });
    const device = await createDevice({ connectorId: hook.id, device_id: 'plain' });
    await deleteRemotely(device.id);
    const failed = expectStatus<DeviceBody>(await call('GET', `/xapi/v1/virtual-devices/${device.id}`), 200);
    expect(failed).toMatchObject({
      lifecycleState: 'DeletionFailed',
      lifecycleReason: 'A webhook-in connector cannot delete devices at a network server',
    });
  });
});
