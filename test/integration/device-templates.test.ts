import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDriver } from './support/device-fixtures.js';
import { login, caller, errorCode, expectStatus } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

type Obj = Record<string, unknown> & { id: string };

let t: TestApp;
let call: ReturnType<typeof caller>;
let driverId: string;

beforeAll(async () => {
  t = await createTestApp();
  call = caller(t, { authorization: `Bearer ${await login(t)}` });
  driverId = await makeDriver(t, t.rootAccountId);
}, 120_000);
afterAll(() => t?.close());

const post = async (url: string, body: unknown, status = 201) =>
  expectStatus<Obj>(await call('POST', url, body), status);

describe('device templates', () => {
  it('links devices, refuses a device without a driver, protects managed groups, unlinks', async () => {
    const template = await post('/xapi/v1/device-templates', {
      title: 'Meter',
      tags: ['meter'],
      groups: ['billing'],
      keyValueData: { vendor: 'Acme' },
    });
    const bare = await post('/xapi/v1/virtual-devices', { device_id: 'bare', title: 'No driver' });
    const r = await call('POST', `/xapi/v1/device-templates/${template.id}/devices`, {
      deviceIds: [bare.id],
    });
    expect(r.statusCode).toBe(422);
    expect(errorCode(r)).toBe('DEVICE_WITHOUT_DRIVER');

    const device = await post('/xapi/v1/virtual-devices', {
      device_id: 'm1',
      title: 'Meter 1',
      deviceDriverId: driverId,
      tags: ['own'],
      groups: ['site'],
    });
    const linked = await post(
      `/xapi/v1/device-templates/${template.id}/devices`,
      { deviceIds: [device.id] },
      200,
    );
    expect((linked.data as Obj[])[0]).toMatchObject({
      deviceTemplateId: template.id,
      tags: ['own', 'meter'],
      groups: ['site', 'billing'],
      keyValueData: { vendor: 'Acme' },
    });
    const drop = await call('PUT', `/xapi/v1/virtual-devices/${device.id}`, { groups: ['site'] });
    expect(drop.statusCode).toBe(422);
    expect(errorCode(drop)).toBe('TEMPLATE_MANAGED_GROUP');
    expectStatus(await call('PUT', `/xapi/v1/virtual-devices/${device.id}`, { groups: ['billing'] }), 200);

    const unlinked = expectStatus<Obj>(
      await call('DELETE', `/xapi/v1/virtual-devices/${device.id}/template`),
      200,
    );
    expect(unlinked.deviceTemplateId).toBeNull();
    expectStatus(await call('PUT', `/xapi/v1/virtual-devices/${device.id}`, { groups: [] }), 200);
  });

  it('synchronises a template change to linked devices as a job, and blocks deletion while it is queued', async () => {
    const template = await post('/xapi/v1/device-templates', {
      title: 'Sync',
      deviceDriverId: driverId,
      groups: ['g1'],
    });
    const device = await post('/xapi/v1/virtual-devices', {
      device_id: 'sync-1',
      title: 'Sync 1',
      deviceTemplateId: template.id,
    });
    expect(device).toMatchObject({ deviceDriverId: driverId, groups: ['g1'] });
    expectStatus(
      await call('PUT', `/xapi/v1/device-templates/${template.id}`, {
        tags: ['new'],
        groups: ['g1', 'g2'],
        keyValueData: { floor: 3 },
        healthConfig: { rules: [{ state: '_raw', operator: 'exists', result: 'Healthy' }] },
      }),
      200,
    );
    const blocked = await call('DELETE', `/xapi/v1/device-templates/${template.id}`);
    expect(blocked.statusCode).toBe(409);
    expect(blocked.json()).toMatchObject({
      error: {
        code: 'DELETE_BLOCKED',
        details: [{ type: 'job', jobType: 'template-sync', status: 'queued' }],
      },
    });
    expect(await t.services.jobs.runner.runOnce()).toBeGreaterThanOrEqual(1);
    const synced = expectStatus<Obj>(await call('GET', `/xapi/v1/virtual-devices/${device.id}`), 200);
    expect(synced).toMatchObject({
      tags: ['new'],
      groups: ['g1', 'g2'],
      keyValueData: { floor: 3 },
      healthConfig: { rules: [{ state: '_raw', operator: 'exists', result: 'Healthy' }] },
    });
    expect((await call('DELETE', `/xapi/v1/device-templates/${template.id}`)).statusCode).toBe(204);
    const after = expectStatus<Obj>(await call('GET', `/xapi/v1/virtual-devices/${device.id}`), 200);
    expect(after.deviceTemplateId).toBeNull();
  });

  it('refuses an invalid health config with 422 but accepts _raw', async () => {
    const bad = await call('POST', '/xapi/v1/device-templates', {
      title: 'Bad',
      healthConfig: { rules: [{}] },
    });
    expect(bad.statusCode).toBe(422);
    await post('/xapi/v1/device-templates', {
      title: 'Raw ok',
      healthConfig: { rules: [{ state: '_raw', operator: 'exists', result: 'Healthy' }] },
    });
  });

  it('copies within the account and into a sub-account; the driver goes along only where usable', async () => {
    const template = await post('/xapi/v1/device-templates', {
      title: 'Orig',
      deviceDriverId: driverId,
      tags: ['t'],
    });
    const same = await post(`/xapi/v1/device-templates/${template.id}/copy`, {});
    expect(same).toMatchObject({
      title: 'Orig (copy)',
      deviceDriverId: driverId,
      tags: ['t'],
      driverDropped: false,
    });
    const child = await post('/xapi/v1/accounts', { title: 'Child', parentId: t.rootAccountId });
    const other = await post(`/xapi/v1/device-templates/${template.id}/copy`, { targetAccountId: child.id });
    expect(other).toMatchObject({
      accountId: child.id,
      title: 'Orig',
      deviceDriverId: null,
      driverDropped: true,
    });
    const sharedDriver = await makeDriver(t, t.rootAccountId, true);
    const withShared = await post('/xapi/v1/device-templates', {
      title: 'Shared',
      deviceDriverId: sharedDriver,
    });
    const copied = await post(`/xapi/v1/device-templates/${withShared.id}/copy`, {
      targetAccountId: child.id,
    });
    expect(copied).toMatchObject({ deviceDriverId: sharedDriver, driverDropped: false });
  });
});
