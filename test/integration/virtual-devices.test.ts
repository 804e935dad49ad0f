import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../server/src/api-keys/api-key.entity.js';
import { Account } from '../../server/src/accounts/account.entity.js';
import { randomToken, sha256 } from '../../server/src/platform/crypto/tokens.js';
import { VirtualDevice } from '../../server/src/devices/virtual-device.entity.js';
import { makeConnector } from './support/device-fixtures.js';
import { login, type ListBody, caller, errorCode, expectStatus } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

type Device = Record<string, unknown> & { id: string; tags: string[]; keyValueData: Record<string, unknown> };

let t: TestApp;
let call: ReturnType<typeof caller>;
let connectorId: string;

beforeAll(async () => {
  t = await createTestApp();
  call = caller(t, { authorization: `Bearer ${await login(t)}` });
  connectorId = await makeConnector(t, t.rootAccountId);
}, 120_000);
afterAll(() => t?.close());

const create = async (body: Record<string, unknown>) =>
  expectStatus<Device>(await call('POST', '/xapi/v1/virtual-devices', body), 201);

describe('virtual devices', () => {
  it('creates with defaults, keeps session keys write-only and never overwrites them on update', async () => {
    const device = await create({
      device_id: 'pump-1',
      title: 'Pump 1',
      connectorId,
      keyValueData: { room: 12, note: 'ä/ö & <ß> "q" 100%' },
      application_session_key: 'AABBCCDD',
      network_session_key: '11223344',
    });
    expect(device).toMatchObject({
      activationMethod: 'OTAA',
      skipFrameCounterCheck: false,
      healthState: 'Unknown',
      lastSeen: null,
      parentId: null,
      targetReferenceId: null,
      hasApplicationSessionKey: true,
      hasNetworkSessionKey: true,
      keyValueData: { room: 12, note: 'ä/ö & <ß> "q" 100%' },
    });
    expect(JSON.stringify(device)).not.toContain('AABBCCDD');
    const updated = expectStatus<Device>(
      await call('PUT', `/xapi/v1/virtual-devices/${device.id}`, {
        title: 'Pump one',
        keyValueData: { room: 13 },
      }),
      200,
    );
    expect(updated).toMatchObject({ device_id: 'pump-1', title: 'Pump one', hasApplicationSessionKey: true });
    const stored = await t.withContext(() => t.ctx.em().findOneOrFail(VirtualDevice, { id: device.id }));
    expect(t.ctx.secretBox.open(stored.applicationSessionKeySealed!)).toBe('AABBCCDD');
    expect(t.ctx.secretBox.open(stored.networkSessionKeySealed!)).toBe('11223344');
  });

  it('accepts only integer operationalStatus', async () => {
    const device = await create({ device_id: 'op-1', title: 'Op', operationalStatus: 3 });
    expect(device.operationalStatus).toBe(3);
    for (const bad of [1.5, '1']) {
      const r = await call('PUT', `/xapi/v1/virtual-devices/${device.id}`, { operationalStatus: bad });
      expect(r.statusCode).toBe(400);
      expect(errorCode(r)).toBe('VALIDATION_ERROR');
    }
  });

  it('refuses an endDeviceId longer than its column by validation, naming the field', async () => {
    const r = await call('POST', '/xapi/v1/virtual-devices', {
      device_id: 'long-end',
      title: 'Long',
      endDeviceId: 'e'.repeat(101),
    });
    expect(r.statusCode).toBe(400);
    expect(r.json<{ error: { details: Array<{ path: string }> } }>().error.details).toContainEqual(
      expect.objectContaining({ path: '/endDeviceId', params: { limit: 100 } }),
    );
  });

  it('refuses a duplicate device_id on one connector (409) but allows it on another', async () => {
    await create({ device_id: 'dup', title: 'A', connectorId });
    const r = await call('POST', '/xapi/v1/virtual-devices', { device_id: 'dup', title: 'B', connectorId });
    expect(r.statusCode).toBe(409);
    expect(errorCode(r)).toBe('DEVICE_ID_TAKEN');
    const other = await makeConnector(t, t.rootAccountId);
    await create({ device_id: 'dup', title: 'B', connectorId: other });
  });

  it('refuses a device_id the embedded broker cannot carry in its topic, on create and on a move there', async () => {
    const broker = await makeConnector(t, t.rootAccountId, 'mqtt-broker');
    for (const deviceId of ['room 101/a', 'meter+1', 'meter#1']) {
      const r = await call('POST', '/xapi/v1/virtual-devices', {
        device_id: deviceId,
        title: 'M',
        connectorId: broker,
      });
      expect(r.statusCode, deviceId).toBe(400);
      expect(errorCode(r)).toBe('VALIDATION_ERROR');
      const { error } = r.json<{ error: { message: string; details: unknown[] } }>();
      expect(error.message).toContain('cannot hold "/", "+" or "#"');
      expect(error.details).toMatchObject([
        { path: '/device_id', keyword: 'format', params: { format: 'mqtt-topic-level' } },
      ]);
    }
    // Elsewhere the id is only a name: a webhook sender puts it in its JSON.
    const elsewhere = await create({ device_id: 'floor2/room-201', title: 'W', connectorId });
    const moved = await call('PUT', `/xapi/v1/virtual-devices/${elsewhere.id}`, { connectorId: broker });
    expect(moved.statusCode).toBe(400);
    expect(errorCode(moved)).toBe('VALIDATION_ERROR');
    await create({ device_id: 'room-101.a_b', title: 'OK', connectorId: broker });
  });

  it('lowercases the EUI for LoRaWAN kinds and generates the EndDevice ID for The Things Stack', async () => {
    const tts = await makeConnector(t, t.rootAccountId, 'tts-uplink');
    const device = await create({
      device_id: 'lora-1',
      title: 'Lora',
      connectorId: tts,
      devEui: '70B3D57ED0000ABC',
    });
    expect(device.devEui).toBe('70b3d57ed0000abc');
    expect(device.endDeviceId).toBe('eui-70b3d57ed0000abc');
    const plain = await create({
      device_id: 'plain-1',
      title: 'Plain',
      connectorId,
      devEui: '70B3D57ED0000ABD',
    });
    expect(plain.devEui).toBe('70B3D57ED0000ABD');
    expect(plain.endDeviceId).toBeNull();
    // ChirpStack is LoRaWAN too: its EUIs are lower-cased; EndDevice IDs are The Things Stack's.
    const chirpstack = await makeConnector(t, t.rootAccountId, 'chirpstack-uplink');
    const heard = await create({
      device_id: 'lora-2',
      title: 'Lora 2',
      connectorId: chirpstack,
      devEui: '70B3D57ED0000ABE',
    });
    expect(heard.devEui).toBe('70b3d57ed0000abe');
    expect(heard.endDeviceId).toBeNull();
  });

  it('search finds a device by part of its title, device_id, EUI or external id, ignoring case', async () => {
    const pump = await create({
      device_id: 'SRCH-Pump-7',
      title: 'Lift station',
      devEui: 'A84041000181F00D',
      externalId: 'ERP-4711/b',
    });
    await create({ device_id: 'srch-other', title: 'Something else', externalId: 'ERP-0815' });
    const found = async (text: string) =>
      expectStatus<ListBody<Device>>(
        await call('GET', `/xapi/v1/virtual-devices?searchItems=${encodeURIComponent(text)}`),
        200,
      ).data.map((d) => d.id);
    expect(await found('pump-7')).toEqual([pump.id]);
    expect(await found('181f00')).toEqual([pump.id]);
    expect(await found('erp-4711')).toEqual([pump.id]);
    expect(await found('LIFT STAT')).toEqual([pump.id]);
    expect(await found('4711/c')).toEqual([]);
  });

  it('lists with search, filters with NOT, sort and paging; parentId and lastSeen are in the list', async () => {
    const parent = await create({ device_id: 'f-parent', title: 'Filter Parent', tags: ['hall'] });
    await create({
      device_id: 'f-1',
      title: 'Filter Alpha',
      tags: ['a', 'x'],
      keyValueData: { room: 12 },
      parentId: parent.id,
    });
    await create({ device_id: 'f-2', title: 'filter beta', tags: ['b'], keyValueData: { room: '13' } });
    const list = async (query: string) =>
      expectStatus<ListBody<Device>>(await call('GET', `/xapi/v1/virtual-devices?${query}`), 200);
    const titles = async (query: string) => (await list(query)).data.map((d) => d.title);

    expect(await titles('searchItems=FILTER&sort=-title')).toEqual([
      'Filter Parent',
      'filter beta',
      'Filter Alpha',
    ]);
    expect(await titles('searchItems=filter&filter[tag]=a')).toEqual(['Filter Alpha']);
    expect(await titles('searchItems=filter&filter[tag][not]=a')).toEqual(['filter beta', 'Filter Parent']);
    expect(await titles('filter[kv.room]=12')).toEqual(['Filter Alpha']);
    expect(await titles('searchItems=filter&filter[kv.room][not]=12')).toEqual([
      'filter beta',
      'Filter Parent',
    ]);
    expect(await titles('filter[title]=alpha')).toEqual(['Filter Alpha']);
    expect(await titles('searchItems=filter&filter[title][not]=alpha&filter[tag][not]=hall')).toEqual([
      'filter beta',
    ]);
    const paged = await list('searchItems=filter&sort=title&pageSize=2&page=2');
    expect(paged.meta).toEqual({ page: 2, pageSize: 2, total: 3 });
    expect(paged.data.map((d) => d.title)).toEqual(['Filter Parent']);
    const child = (await list('filter[title]=alpha')).data[0]!;
    expect(child).toHaveProperty('lastSeen', null);
    expect(child.parentId).toBe(parent.id);
    expect((await call('GET', '/xapi/v1/virtual-devices?filter[colour]=red')).statusCode).toBe(400);
  });

  it('bulk edits and bulk deletes tags by ids and by filter', async () => {
    const a = await create({
      device_id: 'bulk-a',
      title: 'Bulk A',
      tags: ['t1', 't2', 'keep'],
      keyValueData: { k: 1 },
    });
    const b = await create({ device_id: 'bulk-b', title: 'Bulk B', tags: ['t1', 'keep'] });
    const edited = await call('POST', '/xapi/v1/virtual-devices/bulk-edit', {
      ids: [a.id, b.id],
      set: { keyValueData: { site: 'Nord' }, operationalStatus: 2 },
    });
    expect(expectStatus(edited, 200)).toEqual({ updated: 2 });
    const readA = expectStatus<Device>(await call('GET', `/xapi/v1/virtual-devices/${a.id}`), 200);
    expect(readA).toMatchObject({ keyValueData: { k: 1, site: 'Nord' }, operationalStatus: 2 });

    const byIds = await call('POST', '/xapi/v1/virtual-devices/bulk-delete-tags', {
      ids: [a.id],
      tags: ['t1'],
    });
    expect(expectStatus(byIds, 200)).toEqual({ updated: 1 });
    const byFilter = await call('POST', '/xapi/v1/virtual-devices/bulk-delete-tags', {
      filter: { 'filter[title]': 'bulk' },
      tags: ['t1', 't2'],
    });
    expect(expectStatus(byFilter, 200)).toEqual({ updated: 2 });
    const after = expectStatus<ListBody<Device>>(
      await call('GET', '/xapi/v1/virtual-devices?searchItems=bulk&sort=title'),
      200,
    );
    expect(after.data.map((d) => d.tags)).toEqual([['keep'], ['keep']]);
  });

  it('reports created devices per day and the total', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const stats = expectStatus<{ total: number; createdPerDay: Array<{ date: string; count: number }> }>(
      await call('GET', `/xapi/v1/virtual-devices/statistics?from=${today}&to=${today}`),
      200,
    );
    const total = await t.withContext(() => t.ctx.em().count(VirtualDevice, { account: t.rootAccountId }));
    expect(stats.total).toBe(total);
    expect(stats.createdPerDay).toEqual([{ date: today, count: total }]);
    expect(
      (await call('GET', '/xapi/v1/virtual-devices/statistics?from=2020-01-01&to=2024-01-01')).statusCode,
    ).toBe(400);
  });

  it('shows states and a bounded packet history, newest first, with maximumReached', async () => {
    const device = await create({ device_id: 'hist-1', title: 'History', connectorId });
    const connection = t.orm.em.getConnection();
    await connection.execute(
      `INSERT INTO packets (connector_id, device_key, device_uuid, received_at, payload, source)
       SELECT ?, 'hist-1', ?, now(), convert_to('{"n":' || g || '}', 'UTF8'), 'webhook' FROM generate_series(1, 205) g`,
      [connectorId, device.id],
    );
    await connection.execute(
      `INSERT INTO device_states (device_id, key, value, timestamp) VALUES (?, '_raw', '{"n":205}', now())`,
      [device.id],
    );
    const page = expectStatus<{ data: Array<{ payloadText: string }>; meta: Record<string, unknown> }>(
      await call('GET', `/xapi/v1/virtual-devices/${device.id}/packets?pageSize=60`),
      200,
    );
    expect(page.data).toHaveLength(60);
    expect(page.data[0]!.payloadText).toBe('{"n":205}');
    expect(page.meta).toMatchObject({ total: 200, limit: 200, maximumReached: true });
    const last = expectStatus<{ data: unknown[] }>(
      await call('GET', `/xapi/v1/virtual-devices/${device.id}/packets?pageSize=60&page=4`),
      200,
    );
    expect(last.data).toHaveLength(20);
    const states = expectStatus<ListBody<{ key: string; value: unknown }>>(
      await call('GET', `/xapi/v1/virtual-devices/${device.id}/states`),
      200,
    );
    expect(states.data).toEqual([expect.objectContaining({ key: '_raw', value: { n: 205 } })]);
  });

  it('deletes locally, or marks Deleting when the network server should remove it', async () => {
    const a = await create({ device_id: 'del-a', title: 'Del A' });
    const b = await create({ device_id: 'del-b', title: 'Del B' });
    const remote = expectStatus<Device>(
      await call('DELETE', `/xapi/v1/virtual-devices/${a.id}/delete-remotely/true`),
      202,
    );
    expect(remote.lifecycleState).toBe('Deleting');
    expect((await call('DELETE', `/xapi/v1/virtual-devices/${b.id}/delete-remotely/false`)).statusCode).toBe(
      204,
    );
    expect((await call('GET', `/xapi/v1/virtual-devices/${b.id}`)).statusCode).toBe(404);
    expect((await call('DELETE', `/xapi/v1/virtual-devices/${a.id}`)).statusCode).toBe(204);
  });

  it('lets an API key holding only virtualDevice.manage create and read devices', async () => {
    const text = `swk_${randomToken()}`;
    await t.withContext(async () => {
      const em = t.ctx.em();
      const key = new ApiKey();
      key.account = em.getReference(Account, t.rootAccountId);
      key.title = 'devices only';
      key.prefix = text.slice(0, 12);
      key.keyHash = sha256(text);
      key.permissions = ['virtualDevice.manage'];
      await em.persistAndFlush(key);
    });
    const asKey = caller(t, { 'x-api-key': text });
    const device = expectStatus<Device>(
      await asKey('POST', '/xapi/v1/virtual-devices', { device_id: 'key-1', title: 'By key' }),
      201,
    );
    expectStatus(await asKey('GET', `/xapi/v1/virtual-devices/${device.id}`), 200);
    expect((await asKey('GET', '/xapi/v1/device-templates')).statusCode).toBe(403);
  });

  it('applies permission scopes to lists and single reads', async () => {
    const scope = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/permission-scopes', { title: 'Hall 1' }),
      201,
    );
    const inScope = await create({ device_id: 'sc-1', title: 'Scoped in', permissionScopeId: scope.id });
    const outside = await create({ device_id: 'sc-2', title: 'Scoped out' });
    const role = await t.withContext(() => t.services.roles.builtIn('Administrator'));
    await t.withContext(() =>
      t.services.users.create({
        accountId: t.rootAccountId,
        email: 'scoped@stellwerk.test',
        password: 'scoped user password 1',
        roleIds: [role!.id],
        permissionScopeIds: [scope.id],
      }),
    );
    const scoped = caller(t, {
      authorization: `Bearer ${await login(t, 'scoped@stellwerk.test', 'scoped user password 1')}`,
    });
    const listed = expectStatus<ListBody<Device>>(
      await scoped('GET', '/xapi/v1/virtual-devices?searchItems=scoped'),
      200,
    );
    expect(listed.data.map((d) => d.id)).toEqual([inScope.id]);
    expect((await scoped('GET', `/xapi/v1/virtual-devices/${outside.id}`)).statusCode).toBe(404);
    const made = expectStatus<Device>(
      await scoped('POST', '/xapi/v1/virtual-devices', { device_id: 'sc-3', title: 'Scoped new' }),
      201,
    );
    expect(made.permissionScopeId).toBe(scope.id);
  });
});
