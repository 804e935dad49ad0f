import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { apiToken, signIn } from './support/seed.js';

const run = promisify(execFile);
const EMAIL = 'grace@stellwerk.test';
const PASSWORD = 'compiler nanoseconds 1952';

/**
 * The devices area in Chromium: a connector and a device created in the console, a packet published
 * with `mosquitto_pub` using the credentials the console showed once, and its value arriving live
 * on the device page over the WebSocket (authenticated by the session cookie).
 */
let h: ConsoleHarness;
const seen: { username?: string; password?: string; connectorId?: string; deviceUrl?: string } = {};

/** Publishes each line as one message (`mosquitto_pub -l`), with the connector's credentials. */
function publishLines(topic: string, lines: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('mosquitto_pub', [
      ...['-h', '127.0.0.1', '-p', String(h.mqttPort), '-u', seen.username!, '-P', seen.password!],
      ...['-t', topic, '-q', '1', '-l'],
    ]);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`mosquitto_pub ${code}: ${stderr}`)),
    );
    child.stdin.end(`${lines.join('\n')}\n`);
  });
}

/** A sidebar entry (the device page's breadcrumb also says "Devices"). */
const nav = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name }).click();

describe('console devices end to end (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({
      STELLWERK_ADMIN_EMAIL: EMAIL,
      STELLWERK_ADMIN_PASSWORD: PASSWORD,
      // The smallest history, so that the notice at the maximum appears after 51 packets.
      STELLWERK_PACKET_HISTORY_LIMIT: '50',
    });
    // A driver is configuration the console does not edit yet: seeded through the XAPI.
    const token = await apiToken(h.server.baseUrl, EMAIL, PASSWORD);
    const driver = await fetch(`${h.server.baseUrl}/xapi/v1/device-drivers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        title: 'Thermometer (JSON)',
        parser: { type: 'json' },
        targetVariables: [{ key: 'temperature', type: 'number', unit: '°C' }],
      }),
    });
    expect(driver.status).toBe(201);
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('creates an MQTT broker connector and shows its credentials once', async () => {
    const { page } = h;
    await signIn(page, h.server.baseUrl, EMAIL, PASSWORD);

    await nav(page, 'Connectors');
    await page.getByRole('heading', { name: 'Connectors', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'New connector' }).click();
    const dialog = page.getByRole('dialog', { name: 'New connector' });
    await dialog.getByLabel('MQTT broker').check();
    await dialog.getByLabel('Title').fill('Boiler room gateway');
    await h.shot('devices-01-connector-create');
    await dialog.getByRole('button', { name: 'Create connector' }).click();

    const created = page.getByRole('dialog', { name: 'Connector created' });
    await created.getByText('Shown only this once').waitFor();
    seen.username = (await created.getByTestId('broker-username').textContent())!.trim();
    seen.password = (await created.getByTestId('broker-password').textContent())!.trim();
    seen.connectorId = (await created.getByTestId('connector-id').textContent())!.trim();
    expect(seen.username).toMatch(/^c-[0-9a-f]{16}$/);
    expect(seen.password.length).toBeGreaterThanOrEqual(32);
    expect(await created.getByTestId('broker-topic').textContent()).toBe(
      `connectors/${seen.connectorId}/devices/{device_id}/up`,
    );
    expect(await created.getByRole('button', { name: 'Copy password' }).count()).toBe(1);
    await h.shot('devices-02-connector-credentials');
    await created.getByRole('button', { name: 'I have stored them' }).click();

    const row = page.getByTestId('connector-row').filter({ hasText: 'Boiler room gateway' });
    await expect.poll(() => row.getByTestId('connector-status').textContent()).toMatch(/Active/);
  });

  it('deactivates and activates the connector, and searches its log', async () => {
    const { page } = h;
    const row = page.getByTestId('connector-row').filter({ hasText: 'Boiler room gateway' });
    await row.getByRole('button', { name: /Deactivate/ }).click();
    await expect.poll(() => row.getByTestId('connector-status').textContent()).toMatch(/Inactive/);
    await row.getByRole('button', { name: /Activate/ }).click();
    await expect.poll(() => row.getByTestId('connector-status').textContent()).toMatch(/Active/);

    await row.getByRole('button', { name: /Logs/ }).click();
    const logs = page.getByRole('dialog', { name: 'Log of Boiler room gateway' });
    await expect.poll(() => logs.getByTestId('log-entries').locator('li').count()).toBe(2);
    await logs.getByLabel('Search in the log').fill('deactivated');
    await expect.poll(() => logs.getByTestId('log-entries').locator('li').count()).toBe(1);
    expect(await logs.getByTestId('log-entries').textContent()).toContain('Connector deactivated');
    expect(await logs.getByTestId('log-entries').locator('.badge').textContent()).toBe('Info');
    await h.shot('devices-03-connector-logs');
    await logs.getByRole('button', { name: 'Close' }).click();
  });

  it('issues new broker credentials from the edit dialog; the old password stops working', async () => {
    const { page } = h;
    const row = page.getByTestId('connector-row').filter({ hasText: 'Boiler room gateway' });
    await row.getByRole('button', { name: 'Edit Boiler room gateway' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Boiler room gateway' });
    const reissue = edit.getByTestId('credential-reissue');
    await reissue.getByRole('button', { name: 'Issue new credentials' }).click();
    // Asked in the console's own dialog, which says whom the new password concerns.
    const confirm = page.getByRole('dialog', { name: 'Issue new credentials?' });
    await confirm
      .getByText(
        'All devices of the connector “Boiler room gateway” log in with the same password. ' +
          'The connector has no devices yet; the current credentials stop working at once.',
        { exact: true },
      )
      .waitFor();
    await confirm.getByRole('button', { name: 'Issue now' }).click();
    const password = (await reissue.getByTestId('reissued-password').textContent())!.trim();
    expect(await reissue.getByTestId('reissued-username').textContent()).toBe(seen.username);
    expect(password.length).toBeGreaterThanOrEqual(32);
    expect(password).not.toBe(seen.password);
    await h.shot('devices-03a-credential-reissue');
    await edit.getByRole('button', { name: 'Cancel' }).click();

    const old = await run('mosquitto_pub', [
      ...['-h', '127.0.0.1', '-p', String(h.mqttPort), '-u', seen.username!, '-P', seen.password!],
      ...['-t', `connectors/${seen.connectorId}/devices/nobody/up`, '-m', '{}'],
    ]).then(
      () => 'accepted',
      (failure: { stderr?: string }) => failure.stderr ?? 'refused',
    );
    expect(old).toMatch(/not authori[sz]ed|refused|bad user name or password/i);
    // The device test below publishes with the new password.
    seen.password = password;
  });

  it('creates a webhook connector, filters by type and deletes it', async () => {
    const { page } = h;
    await page.getByRole('button', { name: 'New connector' }).click();
    const dialog = page.getByRole('dialog', { name: 'New connector' });
    await dialog.getByLabel('Webhook (incoming)').check();
    await dialog.getByLabel('Title').fill('Weather station hook');
    await dialog.getByRole('button', { name: 'Create connector' }).click();
    const created = page.getByRole('dialog', { name: 'Connector created' });
    const url = (await created.getByTestId('webhook-url').textContent())!.trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/xapi\/v1\/webhooks\/[\w-]+$/);
    await h.shot('devices-03b-webhook-credentials');
    await created.getByRole('button', { name: 'I have stored them' }).click();

    const rows = page.getByTestId('connector-row');
    await expect.poll(() => rows.count()).toBe(2);
    await page.getByLabel('Type').selectOption('webhook-in');
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByLabel('Search').fill('nothing like this');
    await page.getByText('No connector matches the search.').waitFor();
    await page.getByLabel('Search').fill('');
    await page.getByLabel('Type').selectOption('');
    await expect.poll(() => rows.count()).toBe(2);

    await rows
      .filter({ hasText: 'Weather station hook' })
      .getByRole('button', { name: /Delete/ })
      .click();
    await page
      .getByRole('dialog', { name: 'Delete connector' })
      .getByRole('button', { name: 'Delete' })
      .click();
    await expect.poll(() => rows.count()).toBe(1);
  });

  it('creates and edits an MQTT subscription connector in the form its kind schema renders', async () => {
    const { page } = h;
    await page.getByRole('button', { name: 'New connector' }).click();
    const dialog = page.getByRole('dialog', { name: 'New connector' });
    await dialog.getByLabel('MQTT (external broker)').check();
    await dialog.getByLabel('Title').fill('Plant broker');
    const settings = dialog.getByTestId('kind-settings');
    await settings.locator('#kind-setting-url').fill('http://not-mqtt');
    await settings.locator('#kind-setting-topics').fill('plant/+/up\nplant/+/status');
    await settings.locator('#kind-setting-qos').selectOption('1');
    await dialog.getByRole('button', { name: 'Create connector' }).click();
    // The server's problem for the setting appears under its field.
    await settings.locator('#kind-setting-url-hint', { hasText: 'mqtt://' }).waitFor();
    await settings.locator('#kind-setting-url').fill('mqtt://192.0.2.1:1883');
    await settings.locator('#kind-setting-password').fill('s3cret');
    await dialog.getByRole('button', { name: 'Create connector' }).click();
    const created = page.getByRole('dialog', { name: 'Connector created' });
    const id = (await created.getByTestId('connector-id').textContent())!.trim();
    // The server issued nothing for this kind: no "shown once" notice.
    expect(await created.getByText('Shown only this once').count()).toBe(0);
    await created.getByRole('button', { name: 'Close' }).click();

    const token = await apiToken(h.server.baseUrl, EMAIL, PASSWORD);
    const read = await fetch(`${h.server.baseUrl}/xapi/v1/connectors/${id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const connector = (await read.json()) as { type: string; config: Record<string, unknown> };
    expect(connector.type).toBe('mqtt-in');
    expect(connector.config).toEqual({
      url: 'mqtt://192.0.2.1:1883',
      topics: ['plant/+/up', 'plant/+/status'],
      qos: 1,
      password: '********',
    });
    // Editing shows the saved settings; the secret stays stored while its input is left empty.
    const row = page.getByTestId('connector-row').filter({ hasText: 'Plant broker' });
    await row.getByRole('button', { name: 'Edit Plant broker' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Plant broker' });
    await expect
      .poll(() => edit.locator('#kind-setting-topics').inputValue())
      .toBe('plant/+/up\nplant/+/status');
    expect(await edit.locator('#kind-setting-password').inputValue()).toBe('');
    await edit.locator('#kind-setting-qos').selectOption('0');
    await edit.getByRole('button', { name: 'Save' }).click();
    await edit.waitFor({ state: 'hidden' });
    const again = await fetch(`${h.server.baseUrl}/xapi/v1/connectors/${id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await again.json()) as { config: Record<string, unknown> }).config).toEqual({
      url: 'mqtt://192.0.2.1:1883',
      topics: ['plant/+/up', 'plant/+/status'],
      qos: 0,
      password: '********',
    });
    await page
      .getByTestId('connector-row')
      .filter({ hasText: 'Plant broker' })
      .getByRole('button', { name: /Delete/ })
      .click();
    await page
      .getByRole('dialog', { name: 'Delete connector' })
      .getByRole('button', { name: 'Delete' })
      .click();
    await expect.poll(() => page.getByTestId('connector-row').count()).toBe(1);
  });

  it('creates a device and shows a mosquitto_pub packet live on its page', async () => {
    const { page } = h;
    await nav(page, 'Devices');
    await page.getByRole('heading', { name: 'Devices', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'New device' }).click();
    const dialog = page.getByRole('dialog', { name: 'New device' });
    await expect.poll(() => dialog.getByLabel('Connector').inputValue()).toBe(seen.connectorId);
    await expect
      .poll(() => dialog.getByLabel('Device driver').locator('option:checked').textContent())
      .toBe('Thermometer (JSON)');
    await dialog.getByLabel('Device id').fill('boiler-1');
    await dialog.getByLabel('Title', { exact: true }).fill('Boiler 1');
    await dialog.getByLabel('Reference id (optional)').fill('BOILER-1');
    await h.shot('devices-04-device-create');
    await dialog.getByRole('button', { name: 'Create device' }).click();

    await page.getByTestId('device-title').waitFor();
    expect(await page.getByTestId('device-title').textContent()).toBe('Boiler 1');
    seen.deviceUrl = page.url();
    // The connector's kind by its name, not its API id.
    expect(await page.getByTestId('device-connector-kind').textContent()).toBe('MQTT broker');
    await expect
      .poll(() => page.getByTestId('live-status').textContent(), { timeout: 15_000 })
      .toMatch(/Live/);

    const { stderr } = await run('mosquitto_pub', [
      ...['-h', '127.0.0.1', '-p', String(h.mqttPort), '-u', seen.username!, '-P', seen.password!],
      ...[
        '-t',
        `connectors/${seen.connectorId}/devices/boiler-1/up`,
        '-m',
        '{"temperature":21.5}',
        '-q',
        '1',
      ],
    ]);
    expect(stderr).toBe('');

    const temperature = page.getByTestId('state-temperature');
    const value = temperature.getByTestId('state-value');
    await expect.poll(() => value.textContent(), { timeout: 15_000 }).toBe('21.5');
    // The driver declares the variable as a number in °C: the row says both.
    expect(await temperature.getByTestId('state-unit').textContent()).toBe('°C');
    expect(await temperature.getByTestId('state-type').textContent()).toBe('Type: Number');
    expect(await temperature.getByTestId('state-warning').count()).toBe(0);
    expect(await page.getByTestId('state-_raw').getByTestId('state-unit').count()).toBe(0);
    expect(await page.getByTestId('live-packets').textContent()).toContain('"temperature": 21.5');
    expect(await page.getByTestId('state-_raw').getByTestId('state-value').textContent()).toBe(
      '{"temperature":21.5}',
    );
    // The history follows by itself once the live packets settled.
    await expect
      .poll(() => page.getByTestId('packet-history').locator('tbody tr').first().textContent(), {
        timeout: 10_000,
      })
      .toContain('{"temperature":21.5}');
    await h.shot('devices-05-device-live');

    // Text where the driver declares a number: kept as sent, and the row says it does not fit.
    await publishLines(`connectors/${seen.connectorId}/devices/boiler-1/up`, ['{"temperature":"abc"}']);
    await expect.poll(() => value.textContent(), { timeout: 15_000 }).toBe('abc');
    expect(await temperature.getByTestId('state-unit').count()).toBe(0);
    expect(await temperature.getByTestId('state-warning').textContent()).toBe(
      'Does not fit the driver’s type Number; stored as received',
    );
    // Read from the stored states after a reload (not the live push), the row says the same.
    await page.reload();
    await expect.poll(() => value.textContent(), { timeout: 15_000 }).toBe('abc');
    expect(await temperature.getByTestId('state-warning').count()).toBe(1);
    await h.shot('devices-05a-device-type-warning');

    // The packet history says the same of the packet that carried the text, for that value only.
    const history = page.getByTestId('packet-history');
    await expect
      .poll(
        async () => {
          await history.getByRole('button', { name: 'Refresh' }).click();
          return history.getByTestId('packet-mismatch').count();
        },
        { timeout: 15_000 },
      )
      .toBe(1);
    const newest = history.locator('tbody tr').first();
    expect(await newest.getByTestId('packet-payload').textContent()).toBe('{"temperature":"abc"}');
    expect(await newest.getByTestId('packet-mismatch').textContent()).toMatch(
      /^\s*temperature\s+"abc"\s+Does not fit the driver’s type Number; stored as received\s*$/,
    );
    await newest.getByTestId('packet-mismatches').scrollIntoViewIfNeeded();
    await h.shot('devices-05b-history-type-warning');
  });

  it('shows the notice once the packet history holds its maximum', async () => {
    const { page } = h;
    expect(await page.getByTestId('history-maximum').count()).toBe(0);
    const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ temperature: 30 + i }));
    await publishLines(`connectors/${seen.connectorId}/devices/boiler-1/up`, lines);
    const value = page.getByTestId('state-temperature').getByTestId('state-value');
    await expect.poll(() => value.textContent(), { timeout: 20_000 }).toBe('79');
    expect(await page.getByTestId('state-temperature').getByTestId('state-warning').count()).toBe(0);
    await expect.poll(() => page.getByTestId('live-packets').locator('li').count()).toBe(50);

    await page.getByTestId('packet-history').getByRole('button', { name: 'Refresh' }).click();
    await expect
      .poll(() => page.getByTestId('history-maximum').textContent())
      .toMatch(/Only the latest 50 packets are kept/);
    expect(await page.getByTestId('packet-history').locator('tbody tr').count()).toBe(50);
  });

  it('sends a downlink from the device page to a subscribed mosquitto_sub and lists it as sent', async () => {
    const { page } = h;
    // Caught here: a failure of the page must not leave the subscriber's rejection unhandled.
    const sub = run('mosquitto_sub', [
      ...['-h', '127.0.0.1', '-p', String(h.mqttPort), '-u', seen.username!, '-P', seen.password!],
      ...[
        '-t',
        `connectors/${seen.connectorId}/devices/boiler-1/down`,
        '-q',
        '1',
        '-C',
        '1',
        '-F',
        '%x',
        '-W',
        '15',
      ],
    ]).catch((error: { stdout: string }) => error);
    const panel = page.getByTestId('downlinks');
    // The embedded broker carries no LoRaWAN port or confirmation: the form does not ask for them.
    await panel.getByLabel('Payload').selectOption('hex');
    expect(await panel.getByLabel('fPort').count()).toBe(0);
    expect(await panel.getByLabel('Confirmed').count()).toBe(0);
    expect(await panel.locator('thead th').allTextContents()).toEqual(['Queued', 'Bytes (hex)', 'Status']);
    await panel.getByLabel('Bytes', { exact: true }).fill('01 2c');
    // Subscribed by now: the broker keeps no message for a subscription that comes later.
    await new Promise((r) => setTimeout(r, 1000));
    await panel.getByRole('button', { name: 'Send downlink' }).click();
    await panel.getByText('The downlink is queued.').waitFor();
    expect((await sub).stdout.trim()).toBe('012c');
    await expect
      .poll(
        async () => {
          await panel.getByRole('button', { name: 'Refresh' }).click();
          return panel.locator('tbody tr').first().textContent();
        },
        { timeout: 10_000 },
      )
      .toMatch(/012c.*sent/);
    await h.shot('devices-06a-device-downlink');
  });

  it('lists the device with search and a NOT filter', async () => {
    const { page } = h;
    await nav(page, 'Devices');
    const rows = page.getByTestId('device-row');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toMatch(/Boiler 1.*boiler-1.*Boiler room gateway/);
    await page.getByRole('button', { name: /Add filter/ }).click();
    await page.getByLabel('Filter on').selectOption('title');
    await page.getByLabel('Condition').selectOption('not');
    await page.getByLabel('Value').fill('boiler');
    await page.getByText('No device matches the search and filters.').waitFor();
    await page.getByLabel('Condition').selectOption('is');
    await expect.poll(() => rows.count()).toBe(1);
    await h.shot('devices-06-device-list');
  });

  it('refuses to delete a connector in use and names the device', async () => {
    const { page } = h;
    await nav(page, 'Connectors');
    const row = page.getByTestId('connector-row').filter({ hasText: 'Boiler room gateway' });
    await row.getByRole('button', { name: /Delete/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete connector' });
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await expect
      .poll(async () => (await dialog.getByTestId('error').innerText()).trim())
      .toBe('It cannot be deleted while it is still in use.');
    expect(await dialog.getByTestId('error').getAttribute('data-code')).toBe('DELETE_BLOCKED');
    expect(await dialog.getByTestId('delete-blockers').getByRole('link', { name: 'Boiler 1' }).count()).toBe(
      1,
    );
    await h.shot('devices-07-delete-blocked');
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    // The device page in German and dark, for the screenshot review.
    await page.goto(seen.deviceUrl!);
    await page.getByLabel('Language').selectOption('de');
    await page.getByTestId('theme-toggle').click();
    await page.getByRole('heading', { name: 'Aktuelle Zustände' }).waitFor();
    const temperature = page.getByTestId('state-temperature');
    await expect.poll(() => temperature.getByTestId('state-type').textContent()).toBe('Typ: Zahl');
    expect(await temperature.getByTestId('state-unit').textContent()).toBe('°C');
    await h.shot('devices-08-device-dark-de');
    expect(h.foreignRequests, 'no request leaves loopback').toEqual([]);
  });
});
