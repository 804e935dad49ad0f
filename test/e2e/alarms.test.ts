import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe-check.js';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import {
  addRoutedState,
  loginXapi,
  seedMqttDevice,
  signIn,
  type SeededDevice,
  type Xapi,
} from './support/seed.js';

const EMAIL = 'ada@stellwerk.test';
const PASSWORD = 'analytical engine 1843';

/**
 * Alarms as an operator works with them, in Chromium, without ever reloading the page: values
 * published with `mosquitto_pub` raise an alarm that appears live with its severity, repeated
 * crossings count on the same entry, the rule's clear condition closes it, and two open alarms are
 * acknowledged together. axe checks the page with rows, a selection and the bulk bar.
 */
let h: ConsoleHarness;
let xapi: Xapi;
let device: SeededDevice;
let twinId: string;

interface Alarm {
  id: string;
  status: string;
  severity: string;
  occurrenceCount: number;
  closeReason: string | null;
  source: { kind: string; id: string } | null;
}

const alarms = () =>
  xapi<{ data: Alarm[] }>('GET', '/xapi/v1/alarm-logs?sort=-createdAt&pageSize=100').then((r) => r.data);

const rule = (title: string, severity: string, threshold: number, clearBelow: number) =>
  xapi('POST', '/xapi/v1/rules', {
    title,
    twinId,
    trigger: { type: 'event', conditions: [{ stateKey: 'pressure', operator: '>', value: threshold }] },
    commands: [
      {
        type: 'alarm',
        severity,
        message: `${title}: {{states.pressure}} bar`,
        clear: { conditions: [{ stateKey: 'pressure', operator: '<', value: clearBelow }] },
      },
    ],
  });

describe('alarms page: live, deduplicated, cleared, bulk acknowledged (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    device = await seedMqttDevice(xapi, h.mqttPort, {
      connectorTitle: 'Pump station gateway',
      driver: { title: 'Pump (JSON)', parser: { type: 'json' } },
      device: { device_id: 'pump-3', title: 'Pump 3 sensor', referenceId: 'PUMP-3' },
    });
    twinId = (await xapi('POST', '/xapi/v1/digital-twins', { title: 'Pump 3', referenceId: 'PUMP-3' })).id;
    await addRoutedState(xapi, twinId, {
      key: 'pressure',
      title: 'Pressure',
      valueType: 'number',
      unit: 'bar',
    });
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('shows an alarm live with its severity, counts repeats on one entry, and drops it when its clear condition holds', async () => {
    const { page } = h;
    const high = await rule('High pressure', 'major', 5, 4.5);
    await signIn(page, h.server.baseUrl, EMAIL, PASSWORD);
    await page
      .getByRole('navigation', { name: 'Main navigation' })
      .getByRole('link', { name: /^Alarms/ })
      .click();
    await page.getByRole('heading', { name: 'Alarms', level: 1 }).waitFor();
    await page.getByText('No open or acknowledged alarm entries.', { exact: false }).waitFor();
    // An empty filter says what there is none of.
    await page.getByLabel('Status').selectOption('closed');
    await page.getByText('No closed alarm entries.', { exact: true }).waitFor();
    await page.getByLabel('Status').selectOption('unresolved');

    // Arrives without a reload: the page and the badge follow the live socket.
    await device.publish({ pressure: 5.2 });
    const row = page.getByTestId('alarm-row').filter({ hasText: 'High pressure: 5.2 bar' });
    await row.waitFor({ timeout: 20_000 });
    expect(await row.getByTestId('alarm-severity').textContent()).toBe('Major');
    expect(await row.getAttribute('data-severity')).toBe('major');
    expect(await row.getByTestId('alarm-count').textContent()).toBe('1');
    await expect.poll(() => page.locator('.sidebar .rl-nav-badge').textContent()).toBe('1');
    await h.shot('alarms-01-live-major');

    // Below the trigger, above the clear threshold (hysteresis), then above again: one entry, counted.
    await device.publish({ pressure: 4.8 });
    await device.publish({ pressure: 5.6 });
    const repeated = page.getByTestId('alarm-row').filter({ hasText: 'High pressure: 5.6 bar' });
    await repeated.waitFor({ timeout: 20_000 });
    expect(await repeated.getByTestId('alarm-count').textContent()).toBe('2');
    expect(await page.getByTestId('alarm-row').count()).toBe(1);
    await h.shot('alarms-02-deduplicated');

    // The clear condition holds: the entry closes itself and leaves the list of unresolved ones.
    await device.publish({ pressure: 4.1 });
    await expect.poll(() => page.getByTestId('alarm-row').count(), { timeout: 20_000 }).toBe(0);
    await expect.poll(() => page.locator('.sidebar .rl-nav-badge').count()).toBe(0);
    const [cleared] = await alarms();
    expect(cleared).toMatchObject({
      status: 'closed',
      closeReason: 'cleared',
      occurrenceCount: 2,
      source: { kind: 'rule', id: high.id },
    });
    // Only a closed entry exists: the default view does not claim there are none at all.
    expect(await page.getByTestId('alarms-table').locator('tbody').textContent()).toContain(
      'No open or acknowledged alarm entries.',
    );
    await page.getByLabel('Status').selectOption('closed');
    // The filter is in the address: a reload (or a copied link) shows the closed entries again.
    await expect.poll(() => page.url()).toContain('status=closed');
    await page.reload();
    await page.getByTestId('alarm-row').first().waitFor();
    expect(await page.getByLabel('Status').inputValue()).toBe('closed');
    const closedRow = page.getByTestId('alarm-row').filter({ hasText: 'High pressure: 5.6 bar' });
    await closedRow.getByRole('button', { name: 'Details' }).click();
    expect(await page.getByTestId('alarm-close-reason').textContent()).toMatch(/cleared automatically/);
    await h.shot('alarms-03-cleared');
    await page.getByLabel('Status').selectOption('unresolved');
  });

  it('acknowledges selected alarms together, filters by severity, and has no serious axe violations', async () => {
    const { page } = h;
    await rule('Very high pressure', 'critical', 6, 5);
    await device.publish({ pressure: 7 });
    const rows = page.getByTestId('alarm-row');
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(2);
    await expect.poll(() => page.locator('.sidebar .rl-nav-badge').textContent()).toBe('2');

    // Most severe first when sorted by severity.
    await page.getByRole('button', { name: 'Severity' }).click();
    await page.getByRole('button', { name: 'Severity' }).click();
    await expect.poll(() => rows.first().getByTestId('alarm-severity').textContent()).toBe('Critical');

    await page.getByLabel('Select all open alarms on this page').check();
    const bar = page.getByTestId('alarm-bulk-bar');
    expect(await bar.textContent()).toContain('2 selected');
    expect(await seriousViolations(page)).toEqual([]);
    await h.shot('alarms-04-selected');
    // The severity and status badges keep their contrast in the dark theme too. Without motion:
    // buttons fade their background for 0.15 s, and axe must not measure a colour half-way.
    await page.emulateMedia({ reducedMotion: 'reduce' });
    await page.evaluate(() => {
      (
        globalThis as unknown as { document: { documentElement: { dataset: Record<string, string> } } }
      ).document.documentElement.dataset.theme = 'dark';
    });
    expect(await seriousViolations(page)).toEqual([]);
    await h.shot('alarms-04b-selected-dark');
    await page.evaluate(() => {
      (
        globalThis as unknown as { document: { documentElement: { dataset: Record<string, string> } } }
      ).document.documentElement.dataset.theme = 'light';
    });
    await page.emulateMedia({ reducedMotion: null });

    await bar.getByRole('button', { name: 'Acknowledge selected' }).click();
    await expect
      .poll(() => page.getByTestId('alarm-done-message').textContent())
      .toBe('2 alarms acknowledged.');
    await expect
      .poll(async () => (await rows.getByTestId('alarm-status').allTextContents()).join(','))
      .toBe('Acknowledged,Acknowledged');
    expect((await alarms()).filter((a) => a.status === 'acknowledged')).toHaveLength(2);
    await expect.poll(() => page.locator('.sidebar .rl-nav-badge').count()).toBe(0);
    await h.shot('alarms-05-bulk-acknowledged');

    await page.getByLabel('Severity', { exact: true }).selectOption('critical');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().getByTestId('alarm-severity').textContent()).toBe('Critical');
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('fits the row actions of a German console at 1280 px and names who acknowledged and closed', async () => {
    const { page } = h;
    const me = await xapi<{ name: string }>('GET', '/xapi/v1/users/me');
    await rule('Druckleitung Obere Talsperre Nordost überschreitet den Grenzwert', 'minor', 8, 7.5);
    await page.getByLabel('Severity', { exact: true }).selectOption('');
    await page.getByLabel('Language').selectOption('de');
    await device.publish({ pressure: 9 });
    const row = page.getByTestId('alarm-row').filter({ hasText: 'Druckleitung Obere Talsperre' });
    await row.waitFor({ timeout: 20_000 });

    expect(page.viewportSize()?.width).toBe(1280);
    const table = await page.locator('main .dev-table-wrap').boundingBox();
    for (const name of ['Bestätigen', 'Schließen']) {
      const box = await row.getByRole('button', { name }).boundingBox();
      expect(box, name).not.toBeNull();
      expect(box!.x, name).toBeGreaterThanOrEqual(table!.x);
      expect(box!.x + box!.width, name).toBeLessThanOrEqual(Math.min(1280, table!.x + table!.width) + 1);
    }
    await h.shot('alarms-06-german-1280');

    // Acknowledged, then closed, by the signed-in user: the details name them with the time.
    await row.getByRole('button', { name: 'Bestätigen' }).click();
    await expect.poll(() => row.getByTestId('alarm-status').textContent()).toBe('Bestätigt');
    await row.getByRole('button', { name: 'Schließen' }).click();
    await page.getByLabel('Status').selectOption('closed');
    const closed = page.getByTestId('alarm-row').filter({ hasText: 'Druckleitung Obere Talsperre' });
    await closed.getByRole('button', { name: 'Details' }).click();
    expect(await page.getByTestId('alarm-acknowledged').textContent()).toContain(`von ${me.name}`);
    expect(await page.getByTestId('alarm-closed').textContent()).toContain(`von ${me.name}`);
    await page.getByLabel('Sprache').selectOption('en');
  });
});
