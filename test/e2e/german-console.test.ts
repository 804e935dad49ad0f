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

const EMAIL = 'grace@stellwerk.test';
const PASSWORD = 'compiler in the navy 1952';
// A German date and time with the zone's label: `26. Nov. 2026, 09:15:03 MEZ` (MESZ in summer).
const GERMAN_TIME = /\d{1,2}\. \S+ \d{4}, \d{2}:\d{2}:\d{2} MES?Z/;

/**
 * The console in German, in Chromium: a value published with `mosquitto_pub` shows with German
 * decimals and its unit on the twin page and a dashboard gauge, times carry the account's zone
 * (Europe/Berlin) and its label until the user picks UTC, the device's health and packet status
 * read in German, and a real server error (a duplicate state key) reads in German with its code.
 */
let h: ConsoleHarness;
let xapi: Xapi;
let device: SeededDevice;
const ids: Record<string, string> = {};

describe('console in German: numbers, times, terms and server errors (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    const { accountId } = await xapi<{ accountId: string }>('GET', '/api/v1/user');
    await xapi('PUT', `/xapi/v1/accounts/${accountId}`, { timeZone: 'Europe/Berlin' });

    device = await seedMqttDevice(xapi, h.mqttPort, {
      connectorTitle: 'Basin gateway',
      driver: { title: 'Pressure sensor (JSON)', parser: { type: 'json' } },
      device: { device_id: 'basin-a-sensor', title: 'Basin A sensor', referenceId: 'BASIN-A' },
    });
    ids.twin = (
      await xapi('POST', '/xapi/v1/digital-twins', { title: 'Basin A', referenceId: 'BASIN-A' })
    ).id;
    ids.pressure = await addRoutedState(xapi, ids.twin, {
      key: 'pressure',
      title: 'Pressure',
      unit: 'bar',
      meta: { visual: { type: 'gauge' } },
    });
    // A state with its own decimals: shown with exactly one.
    ids.level = await addRoutedState(xapi, ids.twin, {
      key: 'level',
      title: 'Level',
      unit: 'm',
      meta: { decimals: 1 },
    });
    const gauge = {
      id: 'g',
      type: 'gauge',
      title: '',
      x: 0,
      y: 0,
      w: 4,
      h: 4,
      twinId: ids.twin,
      stateIds: [ids.pressure],
      max: 10,
    };
    ids.dashboard = (
      await xapi('POST', '/xapi/v1/dashboards', { title: 'Basins', layout: { version: 1, widgets: [gauge] } })
    ).id;
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('shows a live value with German decimals and its unit, and times in the account zone with its label', async () => {
    const { page } = h;
    await signIn(page, h.server.baseUrl, EMAIL, PASSWORD);
    await page.getByLabel('Language').selectOption('de');
    await page.goto(`${h.server.baseUrl}/#/twins/${ids.twin}`);
    await expect.poll(() => page.getByTestId('live-status').textContent()).toMatch(/Live/);

    await device.publish({ pressure: 4.050127, level: 2.34567 });
    await expect
      .poll(() => page.getByTestId('state-value-pressure').textContent(), { timeout: 15_000 })
      .toBe('4,05');
    expect(await page.getByTestId('state-value-level').textContent()).toBe('2,3');
    const row = page.getByTestId('state-row-pressure');
    expect(await row.textContent()).toContain('bar');
    expect(await row.textContent()).toMatch(GERMAN_TIME);
    // The top bar shows which zone times are in.
    expect(await page.getByTestId('time-zone').locator('option:checked').textContent()).toBe(
      'Zeit des Kontos (Europe/Berlin)',
    );
    // The chart's tooltip names the time the same way, and the value with the state's decimals.
    const chart = page.getByTestId('state-chart');
    await expect.poll(() => chart.textContent(), { timeout: 15_000 }).toMatch(/1 Wert\b/);
    await chart.locator('canvas').hover();
    await expect.poll(() => chart.textContent()).toMatch(GERMAN_TIME);
    expect(await chart.textContent()).toContain('2,3\u00a0m');
    await h.shot('german-01-twin-values');

    // The user's own choice applies to every time at once.
    await page.getByTestId('time-zone').selectOption('utc');
    await expect.poll(() => row.textContent()).toMatch(/\d{2}:\d{2}:\d{2} UTC/);
    await page.getByTestId('time-zone').selectOption('account');
    await expect.poll(() => row.textContent()).toMatch(GERMAN_TIME);
  });

  it('shows the gauge reading in German notation with its unit', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/dashboards/${ids.dashboard}`);
    const gauge = page.getByTestId('gauge-widget');
    await expect.poll(() => gauge.getByTestId('gauge-value').textContent(), { timeout: 15_000 }).toBe('4,05');
    expect(await gauge.textContent()).toContain('bar');
    await h.shot('german-02-gauge');
  });

  it('names the device health and packet status in German, with the last packet’s time and zone', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/devices/${device.deviceId}`);
    // The first packet of a device is evaluated promptly: Healthy, shown as "Gesund".
    await expect
      .poll(() => page.getByTestId('device-health-badge').textContent(), { timeout: 15_000 })
      .toBe('Gesund');
    expect(await page.getByTestId('device-last-seen').locator('time').getAttribute('title')).toMatch(
      GERMAN_TIME,
    );
    const history = page.getByTestId('packet-history');
    await expect
      .poll(() => history.locator('tbody tr').first().textContent(), { timeout: 10_000 })
      .toContain('verarbeitet');
    expect(await history.locator('tbody tr').first().textContent()).toMatch(GERMAN_TIME);
    await h.shot('german-03-device');
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('shows a plain mistake in German alone, without heading, code or the server’s English', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/twins/${ids.twin}`);
    await page.getByRole('button', { name: 'Datenpunkt hinzufügen' }).click();
    const dialog = page.getByRole('dialog', { name: 'Datenpunkt hinzufügen' });
    expect(await dialog.locator('#state-valueType option').allTextContents()).toEqual([
      'Zahl',
      'Ganzzahl',
      'Wahrheitswert',
      'Text',
      'Objekt',
    ]);
    await dialog.getByLabel('Schlüssel', { exact: true }).fill('pressure');
    await dialog.getByRole('button', { name: 'Datenpunkt hinzufügen' }).click();

    const notice = dialog.getByTestId('error');
    const german = 'Der digitale Zwilling hat schon einen Datenpunkt mit diesem Schlüssel.';
    await expect.poll(() => notice.getByTestId('error-message').textContent()).toBe(german);
    expect((await notice.innerText()).trim()).toBe(german);
    expect(await notice.getAttribute('data-code')).toBe('DUPLICATE_STATE_KEY');
    // The key field names the problem in German too.
    expect(await dialog.locator('#state-key-hint').textContent()).toBe(german);
    await h.shot('german-04-server-error');
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('keeps the decimals chosen in the state editor', async () => {
    const { page } = h;
    await page.getByTestId('state-editor').getByRole('button', { name: 'Abbrechen' }).click();
    await page.getByRole('button', { name: 'Datenpunkt pressure bearbeiten' }).click();
    const dialog = page.getByRole('dialog', { name: 'Datenpunkt pressure bearbeiten' });
    const decimals = dialog.getByLabel('Nachkommastellen');
    await decimals.fill('zwei');
    await dialog.getByRole('button', { name: 'Datenpunkt speichern' }).click();
    expect(await dialog.locator('#state-decimals-hint').textContent()).toBe(
      'Geben Sie eine ganze Zahl von 0 bis 10 ein oder lassen Sie das Feld leer.',
    );
    await decimals.fill('3');
    await dialog.getByRole('button', { name: 'Datenpunkt speichern' }).click();
    await expect.poll(() => page.getByTestId('state-value-pressure').textContent()).toBe('4,050');
    const saved = await xapi<{ meta: Record<string, unknown> }>('GET', `/xapi/v1/states/${ids.pressure}`);
    expect(saved.meta).toMatchObject({ decimals: 3, visual: { type: 'gauge' } });
  });
});
