import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createUser, USER_PASSWORD } from './support/auth.js';
import { insertConnector, insertDevice, packet, processedPackets } from './support/ingest-fixtures.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, type TestApp } from './support/test-app.js';

/**
 * A device's current states carry what its driver declares for each key: the type and unit of the
 * target variable, and a warning when the value does not fit the type. The value is stored as it came.
 * The states reply also lists every key the driver declares, sent or not, and the packet history
 * names each packet's values that do not fit, both read within the caller's account.
 */
let t: TestApp;
let token: string;

interface StateRow {
  key: string;
  value: unknown;
  valueType: string | null;
  unit: string | null;
  warning: string | null;
}

beforeAll(async () => {
  t = await createTestApp();
  token = await bearer(t, ADMIN_EMAIL, { password: ADMIN_PASSWORD });
});
afterAll(() => t?.close());

async function call(method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, as = token) {
  const response = await t.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${as}` },
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });
  expect(response.statusCode, response.body).toBeLessThan(300);
  return response.json<Record<string, unknown>>();
}

async function states(deviceId: string): Promise<Record<string, StateRow>> {
  const reply = (await call('GET', `/xapi/v1/virtual-devices/${deviceId}/states`)) as { data: StateRow[] };
  return Object.fromEntries(reply.data.map((row) => [row.key, row]));
}

const VARIABLES = [
  { key: 'temperature', type: 'number', unit: '°C' },
  { key: 'open', type: 'boolean' },
];

describe('device states with their declared type', () => {
  let driverId: string;
  let connectorId: string;

  beforeAll(async () => {
    driverId = (
      await call('POST', '/xapi/v1/device-drivers', {
        title: 'Thermometer',
        parser: { type: 'json' },
        targetVariables: VARIABLES,
      })
    ).id as string;
    connectorId = await insertConnector(t);
  });

  const send = async (deviceKey: string, payload: unknown, count: number) => {
    await t.services.packets.append(packet(connectorId, deviceKey, payload));
    await processedPackets(t, connectorId, count);
  };

  it('names the type and unit of each driver variable, and nothing for other keys', async () => {
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'fits-1', driverId });
    await send('fits-1', { temperature: 21.5, open: false, humidity: 40 }, 1);
    const current = await states(deviceId);
    expect(current.temperature).toMatchObject({
      value: 21.5,
      valueType: 'number',
      unit: '°C',
      warning: null,
    });
    expect(current.open).toMatchObject({ value: false, valueType: 'boolean', unit: null, warning: null });
    for (const key of ['humidity', '_raw', '_parsed'])
      expect(current[key], key).toMatchObject({ valueType: null, unit: null, warning: null });
  });

  it('keeps text sent for a number variable as it came, with a warning as twin states give', async () => {
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'text-1', driverId });
    await send('text-1', { temperature: '21.5', open: 'yes' }, 2);
    let current = await states(deviceId);
    expect(current.temperature).toMatchObject({
      value: '21.5',
      valueType: 'number',
      unit: '°C',
      warning: 'value "21.5" does not fit value type number',
    });
    expect(current.open!.warning).toBe('value "yes" does not fit value type boolean');

    await send('text-1', { temperature: 'abc' }, 3);
    expect((await states(deviceId)).temperature).toMatchObject({
      value: 'abc',
      warning: 'value "abc" does not fit value type number',
    });
    // A fitting value clears the warning with the next packet.
    await send('text-1', { temperature: 19 }, 4);
    current = await states(deviceId);
    expect(current.temperature).toMatchObject({ value: 19, warning: null });
  });

  it('follows an edit of the driver at once for the values already stored', async () => {
    const own = (
      await call('POST', '/xapi/v1/device-drivers', {
        title: 'Labels',
        parser: { type: 'json' },
        targetVariables: [{ key: 'reading', type: 'number', unit: 'kWh' }],
      })
    ).id as string;
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'edit-1', driverId: own });
    await send('edit-1', { reading: 'n/a' }, 5);
    expect((await states(deviceId)).reading!.warning).toMatch(/does not fit value type number/);
    await call('PUT', `/xapi/v1/device-drivers/${own}`, {
      targetVariables: [{ key: 'reading', type: 'string' }],
    });
    expect((await states(deviceId)).reading).toMatchObject({
      value: 'n/a',
      valueType: 'string',
      unit: null,
      warning: null,
    });
  });
});

interface DeclaredKey {
  key: string;
  valueType: string;
  unit: string | null;
}

interface PacketRow {
  status: string | null;
  payloadText: string | null;
  mismatches: Array<{ key: string; value: unknown; valueType: string; warning: string }> | null;
}

const history = async (deviceId: string) =>
  ((await call('GET', `/xapi/v1/virtual-devices/${deviceId}/packets`)) as { data: PacketRow[] }).data;

describe("the keys a device's driver declares", () => {
  let driverId: string;
  let connectorId: string;

  beforeAll(async () => {
    driverId = (
      await call('POST', '/xapi/v1/device-drivers', {
        title: 'Thermometer keys',
        parser: { type: 'json' },
        targetVariables: VARIABLES,
      })
    ).id as string;
    connectorId = await insertConnector(t);
  });

  it('lists them for a device that has sent nothing yet, with type and unit', async () => {
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'quiet-1', driverId });
    const reply = (await call('GET', `/xapi/v1/virtual-devices/${deviceId}/states`)) as {
      data: StateRow[];
      declared: DeclaredKey[];
    };
    expect(reply.data).toEqual([]);
    expect(reply.declared).toEqual([
      { key: 'temperature', valueType: 'number', unit: '°C' },
      { key: 'open', valueType: 'boolean', unit: null },
    ]);
  });

  it('keeps listing them next to the keys the device sent, declared or not', async () => {
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'sent-1', driverId });
    await t.services.packets.append(packet(connectorId, 'sent-1', { temperature: 20, humidity: 40 }));
    await processedPackets(t, connectorId, 1);
    const reply = (await call('GET', `/xapi/v1/virtual-devices/${deviceId}/states`)) as {
      data: StateRow[];
      declared: DeclaredKey[];
    };
    expect(reply.data.map((row) => row.key)).toEqual(['_parsed', '_raw', 'humidity', 'temperature']);
    expect(reply.declared.map((d) => d.key)).toEqual(['temperature', 'open']);
  });

  it('lists none for a device without a driver', async () => {
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'plain-1' });
    expect(await call('GET', `/xapi/v1/virtual-devices/${deviceId}/states`)).toMatchObject({
      data: [],
      declared: [],
    });
  });
});

describe('packet history with the values that do not fit the driver', () => {
  let connectorId: string;
  let driverId: string;
  let sent = 0;

  beforeAll(async () => {
    driverId = (
      await call('POST', '/xapi/v1/device-drivers', {
        title: 'Thermometer history',
        parser: { type: 'json' },
        targetVariables: VARIABLES,
      })
    ).id as string;
    connectorId = await insertConnector(t);
  });

  const send = async (deviceKey: string, payload: unknown) => {
    await t.services.packets.append(packet(connectorId, deviceKey, payload));
    await processedPackets(t, connectorId, ++sent);
  };

  it('names each misfit value of each packet with the warning its device state carries', async () => {
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'hist-1', driverId });
    await send('hist-1', { temperature: 21.5, open: false });
    await send('hist-1', { temperature: 'abc', open: 'yes', humidity: 'wet' });
    await send('hist-1', Buffer.from('not json'));
    const [broken, misfit, fitting] = await history(deviceId);
    // A packet that did not parse has no values to check.
    expect(broken).toMatchObject({ status: 'parse-error', mismatches: null });
    expect(misfit!.mismatches).toEqual([
      {
        key: 'temperature',
        value: 'abc',
        valueType: 'number',
        warning: 'value "abc" does not fit value type number',
      },
      {
        key: 'open',
        value: 'yes',
        valueType: 'boolean',
        warning: 'value "yes" does not fit value type boolean',
      },
    ]);
    expect(fitting).toMatchObject({ status: 'parsed', mismatches: [] });
    // The same words as the device state the packet set.
    expect((await states(deviceId)).temperature!.warning).toBe(misfit!.mismatches![0]!.warning);
  });

  it('checks with the driver as it is now, as the device states do', async () => {
    const own = (
      await call('POST', '/xapi/v1/device-drivers', {
        title: 'Meter history',
        parser: { type: 'json' },
        targetVariables: [{ key: 'reading', type: 'number', unit: 'kWh' }],
      })
    ).id as string;
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'hist-edit', driverId: own });
    await send('hist-edit', { reading: 'n/a' });
    expect((await history(deviceId))[0]!.mismatches).toMatchObject([{ key: 'reading', value: 'n/a' }]);
    await call('PUT', `/xapi/v1/device-drivers/${own}`, {
      targetVariables: [{ key: 'reading', type: 'string' }],
    });
    expect((await history(deviceId))[0]!.mismatches).toEqual([]);
  });

  it('has nothing to name for a device without a driver', async () => {
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'hist-plain' });
    await send('hist-plain', { temperature: 'abc' });
    expect(await history(deviceId)).toMatchObject([{ status: 'parsed', mismatches: [] }]);
  });

  it("reads neither the declared keys nor the history of another account's device", async () => {
    const deviceId = await insertDevice(t, { connectorId, deviceKey: 'hist-root', driverId });
    await send('hist-root', { temperature: 'abc' });
    const tenant = (await call('POST', '/xapi/v1/accounts', { title: 'Tenant of the history test' }))
      .id as string;
    await createUser(t, 'history-tenant@stellwerk.test', { accountId: tenant });
    const other = await bearer(t, 'history-tenant@stellwerk.test', { password: USER_PASSWORD });
    for (const route of ['states', 'packets']) {
      const response = await t.app.inject({
        method: 'GET',
        url: `/xapi/v1/virtual-devices/${deviceId}/${route}`,
        headers: { authorization: `Bearer ${other}` },
      });
      expect(response.statusCode, route).toBe(404);
    }
    // A device of its own account it reads: what refuses the other is the account, not a permission.
    const ownDriver = (
      await call(
        'POST',
        '/xapi/v1/device-drivers',
        { title: 'Tenant thermometer', parser: { type: 'json' }, targetVariables: VARIABLES },
        other,
      )
    ).id as string;
    const ownDevice = await insertDevice(t, {
      connectorId: await insertConnector(t, tenant),
      deviceKey: 'tenant-1',
      driverId: ownDriver,
      accountId: tenant,
    });
    const reply = (await call('GET', `/xapi/v1/virtual-devices/${ownDevice}/states`, undefined, other)) as {
      declared: DeclaredKey[];
    };
    expect(reply.declared.map((d) => d.key)).toEqual(['temperature', 'open']);
  });
});
