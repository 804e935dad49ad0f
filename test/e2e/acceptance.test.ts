import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { generate } from 'otplib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../integration/support/server-process.js';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { startLoopbackGuard, type LoopbackGuard } from './support/loopback-guard.js';
import { pictureStats } from './support/screenshot-check.js';

/**
 * The whole story in one browser session against a server this test
 * starts: onboarding of the first admin → login → 2FA enrolment with a code computed (otplib) from
 * the secret the page shows → a connector and a device created in the console → `mosquitto_pub`
 * with the credentials the console showed once → the live value on the device page → a twin with a
 * state routed from the device, created in the console → the value in the twin's state chart → the
 * twin's marker on the map over the offline basemap → (dashboard: see dashboardStep).
 *
 * Every step leaves a screenshot in test-artifacts/e2e/acceptance/NN-step.png (kept after the run,
 * checked not to be blank), and no request may leave loopback (see support/loopback-guard.ts).
 */
const ARTIFACTS = path.join(REPO_ROOT, 'test-artifacts', 'e2e', 'acceptance');
const NAME = 'Margaret Hamilton';
const EMAIL = 'margaret@stellwerk.test';
const PASSWORD = 'apollo guidance 1969';
const TOTP_PERIOD_MS = 30_000;
const run = promisify(execFile);

let h: ConsoleHarness;
let guard: LoopbackGuard;
const story: {
  secret?: string;
  enrolledAt?: Date;
  username?: string;
  password?: string;
  connectorId?: string;
  deviceId?: string;
  twinId?: string;
} = {};

/** RFC 6238 as authenticator apps compute it, from the Base32 secret the console shows. */
const totp = (secret: string, at: Date) =>
  generate({ secret, epoch: Math.floor(at.getTime() / 1000), period: 30, digits: 6, algorithm: 'sha1' });

/** Saves the page as step NN and fails when the picture is blank (one colour, or nearly). */
async function screenshot(page: Page, step: string): Promise<void> {
  const file = path.join(ARTIFACTS, `${step}.png`);
  const picture = await page.screenshot({ path: file, fullPage: true });
  const stats = pictureStats(picture);
  expect(stats.distinctColours, `${step}.png has colours`).toBeGreaterThanOrEqual(64);
  expect(stats.dominantShare, `${step}.png is not one flat colour`).toBeLessThan(0.97);
}

/** A sidebar entry (breadcrumbs repeat some names). */
const nav = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name }).click();

async function publish(payload: unknown): Promise<void> {
  const { stderr } = await run('mosquitto_pub', [
    ...['-h', '127.0.0.1', '-p', String(h.mqttPort), '-u', story.username!, '-P', story.password!],
    ...[
      '-q',
      '1',
      '-t',
      `connectors/${story.connectorId}/devices/boiler-1/up`,
      '-m',
      JSON.stringify(payload),
    ],
  ]);
  expect(stderr).toBe('');
}

describe('console acceptance: the whole story in one browser session (Chromium)', () => {
  beforeAll(async () => {
    await fs.rm(ARTIFACTS, { recursive: true, force: true });
    await fs.mkdir(ARTIFACTS, { recursive: true });
    guard = await startLoopbackGuard();
    // No STELLWERK_ADMIN_*: the server starts without users and prints the onboarding token.
    h = await startConsoleHarness({}, { chromiumArgs: guard.chromiumArgs });
    guard.watch(h.context);
  }, 180_000);

  afterAll(async () => {
    await h?.close();
    await guard?.close();
  });

  it('onboarding of the first admin, login, and 2FA enrolment from the shown secret', async () => {
    const { page } = h;
    const token = /setup token: ([\w-]+)/.exec(h.server.output())?.[1];
    expect(token, 'the server prints the onboarding token').toBeTruthy();
    await page.goto(`${h.server.baseUrl}/onboarding?token=${token}`);
    await expect.poll(() => page.getByLabel('Setup token').inputValue()).toBe(token);
    await page.getByLabel('Name').fill(NAME);
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repeat password').fill(PASSWORD);
    await screenshot(page, '01-onboarding');
    await page.getByRole('button', { name: 'Create administrator' }).click();

    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await page.getByLabel('Password').fill(PASSWORD);
    await screenshot(page, '02-login');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByTestId('greeting').waitFor();

    await page.getByRole('link', { name: 'Set up two-factor authentication' }).click();
    const secret = (await page.getByTestId('totp-secret').textContent())!.trim();
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
    await screenshot(page, '03-two-factor-secret');
    story.enrolledAt = new Date();
    await page.getByLabel('Code from the app').fill(await totp(secret, story.enrolledAt));
    await page.getByRole('button', { name: 'Activate' }).click();
    await page.getByTestId('recovery-codes').locator('li').first().waitFor();
    await screenshot(page, '04-recovery-codes');
    await page.getByLabel('I have stored my recovery codes').check();
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => page.getByTestId('two-factor-state').textContent()).toMatch(/On/);
    story.secret = secret;

    // From now on the second factor is asked for: log in again with the next code.
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    const next = new Date(story.enrolledAt.getTime() + TOTP_PERIOD_MS);
    await page.getByLabel('Authentication code').fill(await totp(secret, next));
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.getByTestId('greeting').textContent()).toBe(`Hello, ${NAME}`);
    await screenshot(page, '05-home-with-2fa');
  }, 90_000);

  it('creates a connector and a device in the console; a mosquitto_pub value appears live on the device page', async () => {
    const { page } = h;
    // Drivers are not edited in this story: one is seeded with the browser's own session (cookie + CSRF header).
    const driver = await page.request.post(`${h.server.baseUrl}/xapi/v1/device-drivers`, {
      headers: { 'x-requested-with': 'stellwerk-acceptance' },
      data: {
        title: 'Boiler thermometer (JSON)',
        parser: { type: 'json' },
        targetVariables: [{ key: 'temperature', type: 'number', unit: '°C' }],
      },
    });
    expect(driver.status(), await driver.text()).toBe(201);

    await nav(page, 'Connectors');
    await page.getByRole('button', { name: 'New connector' }).click();
    const dialog = page.getByRole('dialog', { name: 'New connector' });
    await dialog.getByLabel('MQTT broker').check();
    await dialog.getByLabel('Title').fill('Boiler house gateway');
    await dialog.getByRole('button', { name: 'Create connector' }).click();
    const created = page.getByRole('dialog', { name: 'Connector created' });
    await created.getByText('Shown only this once').waitFor();
    story.username = (await created.getByTestId('broker-username').textContent())!.trim();
    story.password = (await created.getByTestId('broker-password').textContent())!.trim();
    story.connectorId = (await created.getByTestId('connector-id').textContent())!.trim();
    await screenshot(page, '06-connector-credentials');
    await created.getByRole('button', { name: 'I have stored them' }).click();

    await nav(page, 'Devices');
    await page.getByRole('button', { name: 'New device' }).click();
    const deviceDialog = page.getByRole('dialog', { name: 'New device' });
    await expect.poll(() => deviceDialog.getByLabel('Connector').inputValue()).toBe(story.connectorId);
    await expect
      .poll(() => deviceDialog.getByLabel('Device driver').locator('option:checked').textContent())
      .toBe('Boiler thermometer (JSON)');
    await deviceDialog.getByLabel('Device id').fill('boiler-1');
    await deviceDialog.getByLabel('Title', { exact: true }).fill('Boiler 1');
    await screenshot(page, '07-device-create');
    await deviceDialog.getByRole('button', { name: 'Create device' }).click();
    await expect.poll(() => page.getByTestId('device-title').textContent()).toBe('Boiler 1');
    story.deviceId = /#\/devices\/([\w-]+)/.exec(page.url())?.[1];
    expect(story.deviceId).toBeTruthy();
    await expect
      .poll(() => page.getByTestId('live-status').textContent(), { timeout: 15_000 })
      .toMatch(/Live/);

    await publish({ temperature: 64.5 });
    const value = page.getByTestId('state-temperature').getByTestId('state-value');
    await expect.poll(() => value.textContent(), { timeout: 15_000 }).toBe('64.5');
    expect(await page.getByTestId('live-packets').textContent()).toContain('"temperature": 64.5');
    await screenshot(page, '08-device-live-value');
  }, 90_000);

  it('creates a twin with a state routed from the device; a published value appears in its state chart', async () => {
    const { page } = h;
    await nav(page, 'Digital twins');
    await page.getByRole('button', { name: 'New twin' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create a digital twin' });
    await dialog.getByLabel('Title').fill('Boiler house');
    await dialog.getByLabel('Tags').fill('heating');
    await dialog.getByLabel('Latitude').fill('48.137');
    await dialog.getByLabel('Longitude').fill('11.575');
    await dialog.getByRole('button', { name: 'Create twin' }).click();
    await expect.poll(() => page.getByTestId('twin-title').textContent()).toBe('Boiler house');
    story.twinId = /#\/twins\/([\w-]+)/.exec(page.url())?.[1];
    expect(story.twinId).toBeTruthy();

    await page.getByRole('button', { name: 'Add state' }).click();
    const editor = page.getByRole('dialog', { name: 'Add a data state' });
    await editor.getByLabel('Key', { exact: true }).fill('temperature');
    await editor.locator('#state-title').fill('Flow temperature');
    await editor.locator('#state-unit').fill('°C');
    await editor.locator('#state-source-type').selectOption('connector');
    await editor.locator('#state-source-connectorId').selectOption(story.connectorId!);
    await editor.locator('#state-source-deviceId').selectOption(story.deviceId!);
    await editor.locator('#state-source-stateKey').fill('temperature');
    await editor.locator('#state-visual').selectOption('line-chart');
    await editor.locator('#state-y-min').fill('0');
    await editor.locator('#state-y-max').fill('100');
    await screenshot(page, '09-twin-state-editor');
    await editor.getByRole('button', { name: 'Add state' }).click();
    await page.getByTestId('state-row-temperature').waitFor();
    // A new state starts from the device's current value (the packet published above), not empty.
    await expect.poll(() => page.getByTestId('state-value-temperature').textContent()).toMatch('64.5');

    // The chart opens on the line-chart state; the live value is appended to it.
    await page.getByRole('button', { name: 'Show the history of temperature' }).click();
    const chart = page.getByTestId('state-chart');
    await expect.poll(() => page.getByTestId('live-status').textContent()).toMatch(/Live/);
    await publish({ temperature: 71.25 });
    await expect
      .poll(() => page.getByTestId('state-value-temperature').textContent(), { timeout: 15_000 })
      .toMatch('71.25');
    // The start value's point is drawn when it was stored before the chart read the history.
    await expect.poll(() => chart.textContent(), { timeout: 15_000 }).toMatch(/\b[12] points?\b/);
    await expect.poll(() => chart.locator('canvas').count(), { timeout: 15_000 }).toBe(1);
    await screenshot(page, '10-twin-state-chart');

    // Stored points, not only drawn ones: a fresh page reads the start value and the published one back.
    await page.reload();
    await expect
      .poll(() => page.getByTestId('state-chart').textContent(), { timeout: 15_000 })
      .toMatch(/\b2 points\b/);
  }, 90_000);

  it("shows the twin's marker on the map over the offline basemap", async () => {
    const { page } = h;
    await nav(page, 'Map');
    const marker = page.getByTestId('twin-marker');
    await marker.waitFor();
    expect(await marker.getAttribute('data-twin-id')).toBe(story.twinId);
    await expect
      .poll(async () => Number(await page.getByTestId('twin-map').getAttribute('data-rendered-countries')), {
        timeout: 15_000,
      })
      .toBeGreaterThan(3);
    await marker.click();
    await page.getByRole('link', { name: 'Open twin' }).waitFor();
    await screenshot(page, '11-map-marker');
  }, 60_000);

  it('dashboard with a line chart and a gauge showing the value', async () => {
    await dashboardStep(h.page);
  }, 60_000);

  it('sent no request beyond loopback during the whole story', async () => {
    // The recording saw the story's traffic (pages, API, the live WebSocket) …
    expect([...guard.seen].some((url) => url.startsWith('ws://127.0.0.1'))).toBe(true);
    expect([...guard.seen].some((url) => url.includes('/xapi/v1/'))).toBe(true);
    // … and none of it left loopback (Chromium's own service calls are listed apart, and refused too).
    expect(guard.foreign, 'requests that left loopback').toEqual([]);
    expect(h.foreignRequests).toEqual([]);
    console.info(
      `loopback guard: ${guard.seen.size} distinct URLs from the console; Chromium's own calls refused: ${guard.browserServices.length}`,
    );

    // The guard is live: a request for another host, from a page of this context, is caught both ways.
    const probe = await h.context.newPage();
    await probe.evaluate(() => fetch('http://guard-probe.stellwerk.invalid/tile.png').catch(() => null));
    await probe.close();
    await expect
      .poll(() => [...guard.foreign].sort())
      .toEqual([
        'proxy GET http://guard-probe.stellwerk.invalid/tile.png',
        'request http://guard-probe.stellwerk.invalid/tile.png',
      ]);
  });
});

/**
 * DASHBOARD STEP (acceptance 1, last arrow): a dashboard with a line chart and a gauge on the twin's
 * state, created in the console, shows a newly published value in both. Written against the
 * dashboards pages (renderer/src/pages/dashboards/) as they stood when this test was written; their
 * own test is test/e2e/dashboards.test.ts.
 */
async function dashboardStep(page: Page): Promise<void> {
  await nav(page, 'Dashboards');
  await page.getByRole('button', { name: 'New dashboard' }).first().click();
  const form = page.getByRole('dialog', { name: 'Create a dashboard' });
  await form.getByLabel('Title').fill('Boiler house overview');
  await form.getByRole('button', { name: 'New dashboard' }).click();
  await expect.poll(() => page.getByTestId('dashboard-title').textContent()).toBe('Boiler house overview');

  for (const type of ['Line chart', 'Gauge']) {
    await page.getByRole('button', { name: 'Add widget' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Add a widget' });
    await dialog.getByRole('radio', { name: new RegExp(`^${type}`) }).check();
    await dialog.getByLabel('Twin', { exact: true }).selectOption({ label: 'Boiler house' });
    // A line chart takes several states (checkboxes), a gauge one (a select).
    if (type === 'Line chart') await dialog.getByRole('checkbox', { name: /^Flow temperature/ }).check();
    else await dialog.getByLabel('Data state').selectOption({ label: 'Flow temperature (temperature, °C)' });
    await dialog.getByRole('button', { name: 'Add widget' }).click();
    await dialog.waitFor({ state: 'hidden' });
  }
  await page.getByRole('button', { name: 'Save layout' }).click();
  await page.getByRole('status').getByText('Dashboard saved.').waitFor();
  await expect.poll(() => page.getByTestId('widget').count()).toBe(2);
  await expect.poll(() => page.getByTestId('live-status').textContent()).toMatch(/Live/);

  const chart = page.getByTestId('line-chart-widget');
  const pointsBefore = Number((await chart.getAttribute('data-points')) ?? '0');
  await publish({ temperature: 80 });
  await expect.poll(() => page.getByTestId('gauge-value').textContent(), { timeout: 15_000 }).toBe('80');
  await expect.poll(() => chart.getAttribute('data-points')).toBe(String(pointsBefore + 1));
  await expect.poll(() => chart.locator('canvas').count(), { timeout: 15_000 }).toBe(1);
  await expect
    .poll(() => page.locator('[data-widget-type="gauge"] canvas').count(), { timeout: 15_000 })
    .toBe(1);
  await screenshot(page, '12-dashboard');
}
