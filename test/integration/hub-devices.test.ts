import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearer,
  caller,
  errorCode,
  expectStatus,
  login,
  type Credentials,
  type ListBody,
} from './support/identity.js';
import { createConnector, packetsOf, type ConnectorBody } from './support/connectors.js';
import { insertDevice } from './support/ingest-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let t: TestApp;
let admin: Credentials;
let plant: string;
let other: string;
let connector: ConnectorBody;
let meter: string;
let manageKey: string;
let readKey: string;

interface HubDeviceBody {
  id: string;
  device_id: string;
  title: string;
  connectorId: string | null;
  states?: Array<{ key: string; value: unknown; timestamp: string }>;
}

beforeAll(async () => {
  t = await createTestApp();
  admin = bearer(await login(t));
  const call = caller(t, admin);
  plant = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/accounts', { title: 'Hub plant' }),
    201,
  ).id;
  other = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/accounts', { title: 'Other plant' }),
    201,
  ).id;
  connector = await createConnector(t, admin, { type: 'webhook-in', accountId: plant });
  meter = await insertDevice(t, {
    accountId: plant,
    connectorId: connector.id,
    deviceKey: 'meter-1',
    title: 'Meter 1',
  });
  await t.orm.em
    .fork()
    .getConnection()
    .execute(
      `INSERT INTO device_states (device_id, key, value, timestamp) VALUES (?, '_parsed', ?::jsonb, now())`,
      [meter, JSON.stringify({ flow: 2.5 })],
    );
  const key = async (permissions: string[]) =>
    expectStatus<{ key: string }>(
      await call('POST', '/xapi/v1/api-keys', { title: permissions.join(), permissions, accountId: plant }),
      201,
    ).key;
  manageKey = await key(['IotHub.manage']);
  readKey = await key(['IotHub.read']);
});
afterAll(() => t.close());

const hub = (key: string, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  t.app.inject({
    method,
    url,
    headers: { 'x-api-key': key },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

describe('hub device API', () => {
  it("lists the key's devices and reads one with its current states", async () => {
    await insertDevice(t, { accountId: other, connectorId: null, deviceKey: 'foreign', title: 'Foreign' });
    const list = expectStatus<ListBody<HubDeviceBody>>(await hub(readKey, 'GET', '/hub/api/v1/devices'), 200);
    expect(list.data.map((d) => d.device_id)).toEqual(['meter-1']);
    const one = expectStatus<HubDeviceBody>(await hub(readKey, 'GET', `/hub/api/v1/devices/${meter}`), 200);
    expect(one).toMatchObject({
      id: meter,
      device_id: 'meter-1',
      title: 'Meter 1',
      connectorId: connector.id,
    });
    expect(one.states).toEqual([
      { key: '_parsed', value: { flow: 2.5 }, timestamp: expect.any(String) as string },
    ]);
  });

  it('stores pushed data as a packet of the device (IotHub.manage only)', async () => {
    const pushed = await hub(manageKey, 'POST', `/hub/api/v1/devices/${meter}/data`, { flow: 3 });
    expect(pushed.statusCode, pushed.body).toBe(202);
    const [packet] = await packetsOf(t, connector.id);
    expect(packet).toMatchObject({ device_key: 'meter-1', source: 'hub' });
    expect(JSON.parse(packet!.payload.toString())).toEqual({ flow: 3 });

    const readOnly = await hub(readKey, 'POST', `/hub/api/v1/devices/${meter}/data`, { flow: 3 });
    expect(readOnly.statusCode).toBe(403);
    expect(errorCode(readOnly)).toBe('NO_PERMISSION_IOTHUB.MANAGE');
    const tooMany = await hub(
      manageKey,
      'POST',
      `/hub/api/v1/devices/${meter}/data`,
      Array(51).fill({ v: 1 }),
    );
    expect(errorCode(tooMany)).toBe('TOO_MANY_ITEMS');
    expect(await packetsOf(t, connector.id)).toHaveLength(1);
  });

  it('answers 404 for devices outside the key account and 422 for a device without connector', async () => {
    const foreign = await insertDevice(t, { accountId: other, connectorId: null, deviceKey: 'f2' });
    expect((await hub(manageKey, 'GET', `/hub/api/v1/devices/${foreign}`)).statusCode).toBe(404);
    expect((await hub(manageKey, 'POST', `/hub/api/v1/devices/${foreign}/data`, {})).statusCode).toBe(404);
    const lonely = await insertDevice(t, { accountId: plant, connectorId: null, deviceKey: 'lonely' });
    expect(errorCode(await hub(manageKey, 'POST', `/hub/api/v1/devices/${lonely}/data`, {}))).toBe(
      'DEVICE_HAS_NO_CONNECTOR',
    );
  });

  it('documents the device routes in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ url: '/xapi/v1/openapi.json' })).json<{
      paths: Record<string, unknown>;
    }>();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/hub/api/v1/devices',
        '/hub/api/v1/devices/{id}',
        '/hub/api/v1/devices/{id}/data',
      ]),
    );
  });
});
