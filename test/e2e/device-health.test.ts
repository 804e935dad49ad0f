import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe-check.js';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { loginXapi, seedMqttDevice, signIn, type SeededDevice, type Xapi } from './support/seed.js';

const EMAIL = 'florence@stellwerk.test';
const PASSWORD = 'polar area diagram 1858';

/**
 * Device health in Chromium: a driver's default rule (temperature > 80 → Unhealthy), a packet
 * published with `mosquitto_pub` that breaks it, "evaluate now" on the device page showing the new
 * state and reason; the rules made the device's own with an interval schedule, a bad cron refused
 * with the server's message, the reset back to the driver's default, and the list's badge.
 */
let h: ConsoleHarness;
let xapi: Xapi;
const ids: Record<string, string> = {};

type Health = {
  healthState: string;
  healthReason: string | null;
  mode: 'default' | 'manual';
  config: { rules: { value?: unknown; result: string }[] } | null;
  schedule: { cron?: string; intervalSeconds?: number } | null;
};

const health = () => xapi<Health>('GET', `/xapi/v1/virtual-devices/${ids.device}/health`);

let device: SeededDevice;

async function temperature(): Promise<unknown> {
  const states = await xapi<{ data: { key: string; value: unknown }[] }>(
    'GET',
    `/xapi/v1/virtual-devices/${ids.device}/states`,
  );
  return states.data.find((state) => state.key === 'temperature')?.value;
}

describe('device health in the console (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    device = await seedMqttDevice(xapi, h.mqttPort, {
      connectorTitle: 'Boiler house gateway',
      driver: {
        title: 'Boiler thermometer',
        parser: { type: 'json' },
        targetVariables: [{ key: 'temperature', type: 'number', unit: '°C' }],
        healthConfig: { rules: [{ state: 'temperature', operator: '>', value: 80, result: 'Unhealthy' }] },
      },
      device: { device_id: 'boiler-1', title: 'Boiler 1' },
    });
    ids.device = device.deviceId;

    const { page } = h;
    // No fades: axe must judge colours at rest.
    await page.emulateMedia({ reducedMotion: 'reduce' });
    await signIn(page, h.server.baseUrl, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('shows the health with its default rules and evaluates now', async () => {
    const { page } = h;
    // The first packet of an Unknown device is evaluated promptly; later ones wait for the slot.
    await device.publish({ temperature: 21 });
    await expect.poll(async () => (await health()).healthState, { timeout: 15_000 }).toBe('Healthy');
    await device.publish({ temperature: 95 });
    await expect.poll(temperature, { timeout: 15_000 }).toBe(95);
    expect((await health()).healthState).toBe('Healthy');

    await page.goto(`${h.server.baseUrl}/#/devices/${ids.device}`);
    const panel = page.getByTestId('device-health');
    // The page reads the device and its health first: on a busy machine that takes over a second.
    await expect
      .poll(() => panel.getByTestId('health-state').textContent(), { timeout: 10_000 })
      .toBe('Healthy');
    expect(await panel.getByTestId('health-mode').textContent()).toBe('Driver default');
    expect(await panel.getByTestId('health-mode-text').textContent()).toContain('Boiler thermometer');
    expect(await panel.getByTestId('health-rule-list').textContent()).toContain('temperature > 80');
    expect(await panel.getByTestId('health-reason').textContent()).toBe('no rule matched');
    await h.shot('device-health-01-default');

    await panel.getByRole('button', { name: 'Evaluate now' }).click();
    await panel.getByText('Evaluated: Unhealthy.').waitFor();
    expect(await panel.getByTestId('health-state').textContent()).toBe('Unhealthy');
    expect(await panel.getByTestId('health-state').getAttribute('class')).toContain('badge-danger');
    expect(await panel.getByTestId('health-reason').textContent()).toContain('rule 1: temperature > 80');
    expect(await page.getByTestId('device-health-badge').textContent()).toBe('Unhealthy');
    await h.shot('device-health-02-evaluated');
    expect((await health()).healthState).toBe('Unhealthy');
  });

  it("edits the rules into the device's own with an interval, refusing a bad cron with the server's message", async () => {
    const { page } = h;
    const panel = page.getByTestId('device-health');
    await panel.getByRole('button', { name: 'Edit rules' }).click();
    await panel.getByLabel('Value 1').fill('99');
    await panel.getByLabel('On a cron schedule').check();
    await panel.getByLabel('Cron expression').fill('not a cron');
    await panel.getByRole('button', { name: 'Save rules' }).click();
    await panel.getByRole('alert').filter({ hasText: 'Invalid health schedule' }).waitFor();
    expect((await health()).mode).toBe('default');

    await panel.getByLabel('At a fixed interval').check();
    await panel.getByLabel('Interval in minutes').fill('5');
    await h.shot('device-health-03-edit');
    expect(await seriousViolations(page), 'the open rules editor').toEqual([]);
    await panel.getByRole('button', { name: 'Save rules' }).click();
    await panel.getByText('The device now has its own health rules.').waitFor();
    expect(await panel.getByTestId('health-mode').textContent()).toBe('Own rules');
    expect(await panel.getByTestId('health-mode-text').textContent()).toContain('every 5 minutes');
    expect(await panel.getByTestId('health-rule-list').textContent()).toContain('temperature > 99');
    const stored = await health();
    expect(stored).toMatchObject({ mode: 'manual', schedule: { intervalSeconds: 300 } });
    expect(stored.config?.rules[0]).toMatchObject({ value: 99, result: 'Unhealthy' });

    await panel.getByRole('button', { name: 'Evaluate now' }).click();
    await panel.getByText('Evaluated: Healthy.').waitFor();
    await h.shot('device-health-04-manual');
  });

  it("resets to the driver's default, and the list shows the state as a coloured badge", async () => {
    const { page } = h;
    const panel = page.getByTestId('device-health');
    await panel.getByRole('button', { name: 'Reset to driver default' }).click();
    await panel.getByText('The device follows its driver’s rules again.').waitFor();
    expect(await panel.getByTestId('health-mode').textContent()).toBe('Driver default');
    expect(await panel.getByRole('button', { name: 'Reset to driver default' }).count()).toBe(0);
    expect(await health()).toMatchObject({ mode: 'default', schedule: null });

    await panel.getByRole('button', { name: 'Evaluate now' }).click();
    await panel.getByText('Evaluated: Unhealthy.').waitFor();
    await page.getByTestId('theme-toggle').click();
    await h.shot('device-health-05-dark');
    expect(await seriousViolations(page), 'the health panel, dark').toEqual([]);
    await page.getByTestId('theme-toggle').click();

    await page.goto(`${h.server.baseUrl}/#/devices`);
    const badge = page.getByRole('row', { name: /Boiler 1/ }).locator('.badge', { hasText: 'Unhealthy' });
    await badge.waitFor();
    expect(await badge.getAttribute('class')).toContain('badge-danger');
    expect(h.foreignRequests).toEqual([]);
  });
});
