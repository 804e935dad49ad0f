import { spawn } from 'node:child_process';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe-check.js';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { createMqttConnector, loginXapi, signIn, type MqttConnector, type Xapi } from './support/seed.js';

const EMAIL = 'ada@stellwerk.test';
const PASSWORD = 'analytical engine 1843';

/**
 * A site engineer operating devices in Chromium: a connector delete blocked by its devices, unblocked
 * by moving one device (edit) and deleting the other; the device page's own `mosquitto_pub` line
 * run as shown; a packet the driver cannot parse visible in the history; a new twin state picking
 * the device's key and starting from its current value; the connectors list at 1280 px.
 */
let h: ConsoleHarness;
let xapi: Xapi;
let oldGateway: MqttConnector;
let newGateway: MqttConnector;
const ids: Record<string, string> = {};

/** The words of a POSIX shell line as the shell would pass them (plain words and single quotes). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '\\') {
      word = (word ?? '') + line[++i];
    } else if (c === ' ') {
      if (word !== null) words.push(word);
      word = null;
    } else word = (word ?? '') + c;
  }
  if (word !== null) words.push(word);
  return words;
}

function run(command: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

const axeClean = async (page: Page) => expect(await seriousViolations(page)).toEqual([]);

describe('operating devices and connectors in the console (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    oldGateway = await createMqttConnector(xapi, 'Old gateway');
    newGateway = await createMqttConnector(xapi, 'New gateway');
    const driver = await xapi('POST', '/xapi/v1/device-drivers', {
      title: 'Level sensor (JSON)',
      parser: { type: 'json' },
      targetVariables: [{ key: 'level', type: 'number', unit: 'm' }],
    });
    ids.driver = driver.id;
    const device = (body: Record<string, unknown>) =>
      xapi('POST', '/xapi/v1/virtual-devices', {
        connectorId: oldGateway.id,
        deviceDriverId: driver.id,
        ...body,
      });
    ids.lift = (await device({ device_id: 'lift-1', title: 'Lift pump', devEui: '70B3D57ED0001234' })).id;
    ids.spare = (await device({ device_id: 'spare-1', title: 'Spare sensor', externalId: 'ERP-778' })).id;
    ids.twin = (await xapi('POST', '/xapi/v1/digital-twins', { title: 'Lift station' })).id;
    // No fades: axe judges colours at rest, not halfway through a flash.
    await h.page.emulateMedia({ reducedMotion: 'reduce' });
    await signIn(h.page, h.server.baseUrl, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('finds devices by EUI and external id in the search box', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/devices`);
    const search = page.locator('#device-search');
    await search.fill('d0001234');
    await expect
      .poll(() => page.getByTestId('device-row').allTextContents())
      .toEqual([expect.stringContaining('Lift pump')]);
    await search.fill('erp-778');
    await expect
      .poll(() => page.getByTestId('device-row').allTextContents())
      .toEqual([expect.stringContaining('Spare sensor')]);
    await h.shot('device-ops-01-search-external-id');
  }, 60_000);

  it('unblocks a connector delete by moving one device (edit) and deleting the other', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/connectors`);
    const oldRow = page.getByTestId('connector-row').filter({ hasText: 'Old gateway' });
    await oldRow.getByRole('button', { name: 'Delete Old gateway' }).click();
    const dialog = page.getByTestId('delete-dialog');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    const blockers = dialog.getByTestId('delete-blockers');
    await expect
      .poll(() => blockers.getByRole('link').allTextContents())
      .toEqual(['Lift pump', 'Spare sensor']);
    await h.shot('device-ops-02-connector-delete-blocked');

    // The blocker is a link: the device page, where the device moves to the new gateway.
    await blockers.getByRole('link', { name: 'Lift pump' }).click();
    await page.getByTestId('device-title').filter({ hasText: 'Lift pump' }).waitFor();
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const edit = page.getByTestId('device-edit-dialog');
    await expect.poll(() => edit.locator('#edit-connector option').count()).toBeGreaterThan(2);
    await edit.getByLabel('Connector').selectOption(newGateway.id);
    await edit.getByLabel('External id').fill('ERP-1001');
    await edit.getByLabel('Tags').fill('pumps, north');
    await edit.getByLabel('Key-value data (JSON)').fill('{"room": 12}');
    await axeClean(page);
    await h.shot('device-ops-03-device-edit');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.getByTestId('device-external-id').textContent()).toBe('ERP-1001');
    const moved = await xapi<{ connectorId: string; tags: string[]; keyValueData: unknown }>(
      'GET',
      `/xapi/v1/virtual-devices/${ids.lift}`,
    );
    expect(moved).toMatchObject({
      connectorId: newGateway.id,
      tags: ['pumps', 'north'],
      keyValueData: { room: 12 },
    });

    await page.goto(`${h.server.baseUrl}/#/devices/${ids.spare}`);
    await page.getByTestId('device-title').filter({ hasText: 'Spare sensor' }).waitFor();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const remove = page.getByTestId('device-delete-dialog');
    await h.shot('device-ops-04-device-delete');
    await remove.getByRole('button', { name: 'Delete device' }).click();
    await page.getByRole('heading', { name: 'Devices', level: 1 }).waitFor();

    await page.goto(`${h.server.baseUrl}/#/connectors`);
    await oldRow.getByRole('button', { name: 'Delete Old gateway' }).click();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await expect
      .poll(() => page.getByTestId('connector-row').allTextContents())
      .toEqual([expect.stringContaining('New gateway')]);
  }, 90_000);

  it('shows the topic and a mosquitto_pub line that, run as shown, delivers a value', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/devices/${ids.lift}`);
    const connection = page.getByTestId('device-connection');
    await expect
      .poll(() => connection.getByTestId('connection-topic').textContent())
      .toBe(`connectors/${newGateway.id}/devices/lift-1/up`);
    expect(await connection.getByTestId('connection-port').textContent()).toBe(String(h.mqttPort));
    // Until credentials are issued the password is unknown here: the line says so with a placeholder.
    expect(await connection.getByTestId('connection-command').textContent()).toContain("-P '<password>'");
    // The password belongs to the connector, not the device: the confirmation says that all its
    // devices get the new one, and counts them.
    await xapi('POST', '/xapi/v1/virtual-devices', {
      connectorId: newGateway.id,
      device_id: 'lift-2',
      title: 'Lift pump 2',
    });
    await connection.getByRole('button', { name: 'Issue new credentials' }).click();
    const confirm = page.getByRole('dialog', { name: 'Issue new credentials?' });
    await confirm
      .getByText(
        'All devices of the connector “New gateway” log in with the same password. The current credentials ' +
          'stop working at once for all 2 devices; each of them then needs the new ones.',
        { exact: true },
      )
      .waitFor();
    await axeClean(page);
    await h.shot('device-ops-05a-credentials-confirm');
    await confirm.getByRole('button', { name: 'Issue now' }).click();
    await connection.getByTestId('connection-password').waitFor();
    const line = (await connection.getByTestId('connection-command').textContent())!;
    expect(line).not.toContain('<password>');
    await expect.poll(() => page.getByTestId('live-status').textContent()).toMatch(/Live/);
    await h.shot('device-ops-05-connection');

    const [command, ...args] = shellWords(line);
    expect(command).toBe('mosquitto_pub');
    const result = await run(command!, args);
    expect(result).toEqual({ code: 0, stderr: '' });
    await expect
      .poll(() => page.getByTestId('state-level').getByTestId('state-value').textContent(), {
        timeout: 15_000,
      })
      .toBe('21.5');
    newGateway.password = args[args.indexOf('-P') + 1]!;
    await axeClean(page);
  }, 60_000);

  it('shows a packet the driver could not parse with its error in the history', async () => {
    const { page } = h;
    await publishRaw('{"level": 3.2,');
    const history = page.getByTestId('packet-history');
    const error = history.getByTestId('packet-error').first();
    // The status is written with the batch commit: read the history again until it is there.
    await expect
      .poll(
        async () => {
          await history.getByRole('button', { name: 'Refresh' }).click();
          return error.isVisible();
        },
        { timeout: 15_000 },
      )
      .toBe(true);
    expect(await error.textContent()).toMatch(/Payload is not valid JSON/);
    expect((await error.textContent())!.trim()).not.toBe('');
    await error.scrollIntoViewIfNeeded();
    await h.shot('device-ops-06-parse-error');
  }, 60_000);

  it('deactivates a device: its packets are kept but not processed, until it is activated again', async () => {
    const { page } = h;
    await page.getByRole('button', { name: 'Deactivate', exact: true }).click();
    await page.getByTestId('device-inactive').waitFor();
    await publishRaw('{"level": 7}');
    const history = page.getByTestId('packet-history');
    await expect
      .poll(
        async () => {
          await history.getByRole('button', { name: 'Refresh' }).click();
          return history.locator('tbody tr').first().textContent();
        },
        { timeout: 15_000 },
      )
      .toMatch(/device inactive[\s\S]*\{"level": 7\}/);
    expect(await page.getByTestId('state-level').getByTestId('state-value').textContent()).toBe('21.5');
    await axeClean(page);
    await h.shot('device-ops-07-device-inactive');
    await page.getByRole('button', { name: 'Activate', exact: true }).click();
    await expect.poll(() => page.getByTestId('device-inactive').count()).toBe(0);
  }, 60_000);

  it('creates a state from the device: picks its key, warns about an unknown one, starts from the current value', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/twins/${ids.twin}`);
    await page.getByRole('button', { name: 'Add state' }).click();
    const editor = page.getByRole('dialog', { name: 'Add a data state' });
    await editor.locator('#state-source-type').selectOption('connector');
    await editor.locator('#state-source-connectorId').selectOption(newGateway.id);
    await editor.locator('#state-source-deviceId').selectOption(ids.lift!);
    const keys = editor.getByTestId('device-keys');
    await h.shot('device-ops-08-device-chosen');
    await keys.getByRole('button', { name: /^level/ }).waitFor();
    expect(await keys.getByRole('button', { name: /^level/ }).textContent()).toMatch(/now: 21\.5/);

    await editor.getByLabel('Key', { exact: true }).fill('level');
    await editor.locator('#state-source-stateKey').fill('levle');
    await editor.getByRole('button', { name: 'Add state' }).click();
    await editor.getByTestId('unknown-key-warning').waitFor();
    expect(await editor.getByTestId('unknown-key-warning').textContent()).toMatch(/“levle” is not among/);
    await axeClean(page);
    await h.shot('device-ops-09-unknown-key-warning');

    await keys.getByRole('button', { name: /^level/ }).click();
    expect(await editor.locator('#state-source-stateKey').inputValue()).toBe('level');
    await editor.getByRole('button', { name: 'Add state' }).click();
    await expect.poll(() => page.getByTestId('state-value-level').textContent()).toMatch('21.5');
    await h.shot('device-ops-10-state-from-device');
  }, 60_000);

  it('keeps every action of the connectors list on screen at 1280 px', async () => {
    const { page } = h;
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${h.server.baseUrl}/#/connectors`);
    const row = page.getByTestId('connector-row').first();
    for (const name of [/^Deactivate/, /^Delete/]) {
      const box = (await row.getByRole('button', { name }).boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(1280);
    }
    const wrap = page.locator('.dev-table-wrap').first();
    expect(
      await wrap.evaluate(
        (el: { scrollWidth: number; clientWidth: number }) => el.scrollWidth - el.clientWidth,
      ),
    ).toBeLessThanOrEqual(0);
    await axeClean(page);
    await h.shot('device-ops-11-connectors-1280');
    // The connector's own page for its settings: the edit dialog, with credentials to reissue.
    await row.getByRole('button', { name: 'Edit New gateway' }).click();
    const edit = page.getByTestId('connector-edit-dialog');
    await edit.getByRole('button', { name: 'Issue new credentials' }).waitFor();
    await axeClean(page);
  }, 60_000);
});

/** Publishes bytes as they are (not JSON-encoded), with the credentials the device page issued. */
async function publishRaw(message: string): Promise<void> {
  const result = await run('mosquitto_pub', [
    ...['-h', '127.0.0.1', '-p', String(h.mqttPort), '-u', newGateway.username, '-P', newGateway.password],
    ...['-q', '1', '-t', `connectors/${newGateway.id}/devices/lift-1/up`, '-m', message],
  ]);
  expect(result).toEqual({ code: 0, stderr: '' });
}
