import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from './support/auth.js';
import { insertConnector, insertDevice, packet, processedPackets } from './support/ingest-fixtures.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, type TestApp } from './support/test-app.js';

/**
 * A device's current states carry what its driver declares for each key: the type and unit of the
 * target variable, and a warning when the value does not fit the type. The value is stored as it came.
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

async function call(method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) {
  const response = await t.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}` },
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
