import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import {
  addRoutedState,
  loginXapi,
  seedMqttDevice,
  signIn,
  type SeededDevice,
  type Xapi,
} from './support/seed.js';

const ADMIN = { email: 'ada@stellwerk.test', password: 'analytical engine 1843' };
const READER = { email: 'alarm-reader@stellwerk.test', password: 'alarm reader password' };

/**
 * Write actions follow the role, in Chromium: a user who may only read devices, connectors and
 * alarms sees the lists and details without New, Import, Edit, Delete, Acknowledge or Close, and
 * reads "not visible to your role" for a driver they may not read; an administrator sees them all.
 */
let h: ConsoleHarness;
let xapi: Xapi;
let device: SeededDevice;

async function logOut(): Promise<void> {
  await h.page.getByRole('button', { name: 'Log out' }).click();
  await h.page.getByLabel('E-mail').waitFor();
}

/** Opens `path` in the console and waits for its level-one heading. */
async function open(path: string, heading: string): Promise<void> {
  await h.page.goto(`${h.server.baseUrl}/#${path}`);
  await h.page.getByRole('heading', { name: heading, level: 1 }).waitFor();
}

const button = (name: string) => h.page.getByRole('button', { name, exact: true });
const buttonCount = (name: string) => button(name).count();

describe('console write buttons follow the signed-in user’s permissions (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({
      STELLWERK_ADMIN_EMAIL: ADMIN.email,
      STELLWERK_ADMIN_PASSWORD: ADMIN.password,
    });
    xapi = await loginXapi(h.server.baseUrl, ADMIN.email, ADMIN.password);
    device = await seedMqttDevice(xapi, h.mqttPort, {
      connectorTitle: 'Boiler gateway',
      driver: { title: 'Boiler (JSON)', parser: { type: 'json' } },
      device: { device_id: 'boiler-1', title: 'Boiler 1 sensor', referenceId: 'BOILER-1' },
    });
    const twinId = (
      await xapi('POST', '/xapi/v1/digital-twins', { title: 'Boiler 1', referenceId: 'BOILER-1' })
    ).id;
    await addRoutedState(xapi, twinId, {
      key: 'pressure',
      title: 'Pressure',
      valueType: 'number',
      unit: 'bar',
    });
    await xapi('POST', '/xapi/v1/rules', {
      title: 'Boiler pressure',
      twinId,
      trigger: { type: 'event', conditions: [{ stateKey: 'pressure', operator: '>', value: 5 }] },
      commands: [{ type: 'alarm', severity: 'major', message: 'Boiler pressure high' }],
    });
    const role = await xapi('POST', '/xapi/v1/roles', {
      name: 'Alarm reader',
      permissions: ['VirtualDevice.read', 'connector.read', 'alarmLog.read'],
    });
    await xapi('POST', '/xapi/v1/users', {
      email: READER.email,
      name: 'Alarm reader',
      password: READER.password,
      roleIds: [role.id],
    });
    await device.publish({ pressure: 6 });
    // expect.poll belongs to tests; wait here so both tests start with the alarm raised.
    for (
      let tries = 0;
      (await xapi<{ data: unknown[] }>('GET', '/xapi/v1/alarm-logs')).data.length === 0;
      tries++
    ) {
      if (tries > 100) throw new Error('the rule raised no alarm');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('shows a reader the lists and details without the actions the server would refuse', async () => {
    await signIn(h.page, h.server.baseUrl, READER.email, READER.password);

    await open('/devices', 'Devices');
    await h.page.getByTestId('device-row').filter({ hasText: 'Boiler 1 sensor' }).waitFor();
    expect(await buttonCount('New device')).toBe(0);
    expect(await buttonCount('Import CSV')).toBe(0);

    await open(`/devices/${device.deviceId}`, 'Boiler 1 sensor');
    expect(await h.page.getByTestId('device-driver-hidden').textContent()).toBe(
      `Not visible to your role (id ${device.driverId})`,
    );
    expect(await buttonCount('Edit')).toBe(0);
    expect(await buttonCount('Delete')).toBe(0);

    await open('/connectors', 'Connectors');
    await h.page.getByText('Boiler gateway').first().waitFor();
    expect(await buttonCount('New connector')).toBe(0);
    expect(await h.page.getByRole('button', { name: /^Delete/ }).count()).toBe(0);

    await open('/alarms', 'Alarms');
    await h.page.getByTestId('alarm-row').filter({ hasText: 'Boiler pressure high' }).waitFor();
    expect(await h.page.getByRole('button', { name: /^Acknowledge/ }).count()).toBe(0);
    expect(await h.page.getByRole('button', { name: /^Close/ }).count()).toBe(0);
    await logOut();
  });

  it('shows an administrator the same pages with their actions', async () => {
    await signIn(h.page, h.server.baseUrl, ADMIN.email, ADMIN.password);

    await open('/devices', 'Devices');
    await button('New device').waitFor();
    expect(await buttonCount('Import CSV')).toBe(1);

    await open(`/devices/${device.deviceId}`, 'Boiler 1 sensor');
    await h.page.getByRole('link', { name: 'Boiler (JSON)' }).waitFor();
    expect(await buttonCount('Edit')).toBe(1);
    expect(await buttonCount('Delete')).toBe(1);

    await open('/connectors', 'Connectors');
    await button('New connector').waitFor();
    await h.page.getByRole('button', { name: /^Delete\s+Boiler gateway/ }).waitFor();

    await open('/alarms', 'Alarms');
    const row = h.page.getByTestId('alarm-row').filter({ hasText: 'Boiler pressure high' });
    await row.getByRole('button', { name: /^Acknowledge/ }).waitFor();
    expect(await row.getByRole('button', { name: /^Close/ }).count()).toBe(1);
    await logOut();
  });
});
