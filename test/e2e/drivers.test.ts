import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { createMqttConnector, loginXapi, signIn, type Xapi } from './support/seed.js';
import { WATER_METER_CODEC } from '../integration/support/ts013-codecs.js';

const EMAIL = 'ada@stellwerk.test';
const PASSWORD = 'analytical engine 1843';

/**
 * Drivers, templates and device bulk work in Chromium: a binary-layout driver built in the editor
 * (with the server's 422 details shown at the field), the parser test with a hex sample, a template
 * linked on a device page and copied, a CSV import followed to its end with the bad row listed, and
 * a tag added to two devices at once (checked through the XAPI).
 */
let h: ConsoleHarness;
let xapi: Xapi;
const seen: { connectorId?: string; deviceId?: string; driverId?: string; templateId?: string } = {};

const nav = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name, exact: true }).click();

describe('console drivers, templates and bulk work end to end (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    seen.connectorId = (await createMqttConnector(xapi, 'Meter gateway')).id;
    // A device without a driver: the template will bring one.
    seen.deviceId = (
      await xapi<{ id: string }>('POST', '/xapi/v1/virtual-devices', {
        device_id: 'meter-0',
        title: 'Meter 0',
        connectorId: seen.connectorId,
        tags: ['cellar'],
      })
    ).id;
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('builds a binary-layout driver and shows the server’s 422 detail at the field', async () => {
    const { page } = h;
    await signIn(page, h.server.baseUrl, EMAIL, PASSWORD);

    await nav(page, 'Drivers');
    await page.getByRole('heading', { name: 'Device drivers', level: 1 }).waitFor();
    await page.getByText('No drivers yet').waitFor();
    await page.getByRole('button', { name: 'New driver' }).click();
    await page.getByTestId('driver-heading').waitFor();
    await page.getByLabel('Title').fill('Meter (binary)');
    await page.getByLabel('Binary layout').check();

    await page.getByRole('button', { name: 'Add field' }).click();
    await page.getByLabel('Name 1', { exact: true }).first().fill('temperature');
    await page.getByLabel('Type 1').first().selectOption('int16');
    await page.getByLabel('Scale 1').fill('0.1');
    await page.getByRole('button', { name: 'Add field' }).click();
    await page.getByLabel('Name 2', { exact: true }).first().fill('battery');
    // The next field starts where the last one ends.
    expect(await page.getByLabel('Byte offset 2').inputValue()).toBe('2');
    await page.getByRole('button', { name: 'Add the fields as number variables' }).click();
    const variables = page.getByTestId('variables');
    expect(await variables.getByLabel('Name 1').inputValue()).toBe('temperature');
    expect(await variables.getByLabel('Name 2').inputValue()).toBe('battery');
    await variables.getByLabel('Unit (optional) 1').fill('°C');
    await variables.getByLabel('Unit (optional) 2').fill('%');

    await page.getByRole('button', { name: 'Add rule' }).click();
    const rules = page.getByTestId('health-rules');
    await rules.getByLabel('State 1', { exact: true }).selectOption('battery');
    await rules.getByLabel('Operator 1', { exact: true }).selectOption('<');
    await rules.getByLabel('Value 1', { exact: true }).fill('low');
    await rules.getByLabel('Health state 1').fill('Low battery');
    await page.getByRole('button', { name: 'Create driver' }).click();
    // The server refuses the rule; its problem is shown at the value (worded by the console from the
    // detail's keyword) and the field is focused.
    await expect.poll(() => rules.locator('.drv-cell-problem').textContent()).toBe('must be a number');
    expect(await page.getByTestId('error').getAttribute('data-code')).toBe('INVALID_HEALTH_CONFIG');
    expect(await rules.getByLabel('Value 1', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await expect
      .poll(() =>
        page.evaluate(
          "document.activeElement?.getAttribute('aria-invalid') === 'true' && !!document.activeElement.closest('[data-testid=\"health-rules\"]')",
        ),
      )
      .toBe(true);
    await h.shot('drivers-01-health-422');

    await rules.getByLabel('Value 1', { exact: true }).fill('20');
    await page.getByRole('button', { name: 'Create driver' }).click();
    await page.waitForURL(/#\/drivers\/[0-9a-f-]{36}$/);
    seen.driverId = page.url().split('/').at(-1);
    await expect.poll(() => page.getByTestId('driver-heading').textContent()).toBe('Meter (binary)');
    const stored = await xapi<{ parser: Record<string, unknown>; healthConfig: unknown }>(
      'GET',
      `/xapi/v1/device-drivers/${seen.driverId}`,
    );
    expect(stored.parser).toEqual({
      type: 'binary',
      fields: [
        { key: 'temperature', offset: 0, type: 'int16', endian: 'big', scale: 0.1 },
        { key: 'battery', offset: 2, type: 'uint8', endian: 'big' },
      ],
    });
    expect(stored.healthConfig).toEqual({
      rules: [{ state: 'battery', operator: '<', value: 20, result: 'Low battery' }],
    });
  });

  it('parses a hex sample in the parser test and shows a parse error body', async () => {
    const { page } = h;
    const panel = page.getByTestId('parser-test');
    await panel.getByLabel('Format').selectOption('hex');
    await panel.getByLabel('Sample packet').fill('00 d7 5a');
    await panel.getByRole('button', { name: 'Run parser test' }).click();
    const result = panel.getByTestId('parser-test-result');
    await expect
      .poll(() => result.getByTestId('parsed-temperature').getByTestId('parsed-value').textContent())
      .toBe('21.5');
    expect(await result.getByTestId('parsed-battery').textContent()).toMatch(/90\s*%/);
    await h.shot('drivers-02-parser-test');

    await panel.getByLabel('Sample packet').fill('00');
    await panel.getByRole('button', { name: 'Run parser test' }).click();
    // The console's sentence, with the server's particulars: what the parser needed.
    await expect
      .poll(() => panel.getByTestId('error').getByTestId('error-server-text').textContent())
      .toBe('Field "temperature" needs bytes 0..1 but the payload has 1 bytes');
    expect(await panel.getByTestId('error').getByTestId('error-message').textContent()).toBe(
      'The payload could not be parsed.',
    );
    expect(await panel.getByTestId('parser-test-result').count()).toBe(0);
  });

  it('takes a LoRaWAN payload codec pasted unchanged and tests it by fPort, with warnings, errors and console lines', async () => {
    const { page } = h;
    await nav(page, 'Drivers');
    await page.getByRole('button', { name: 'New driver' }).click();
    await page.getByTestId('driver-heading').waitFor();
    await page.getByLabel('Title').fill('Water meter codec');
    await page.getByLabel('JavaScript').check();
    await page.getByLabel('Script', { exact: true }).fill(WATER_METER_CODEC);
    await page.getByRole('button', { name: 'Create driver' }).click();
    await page.waitForURL(/#\/drivers\/[0-9a-f-]{36}$/);
    const id = page.url().split('/').at(-1)!;
    const stored = await xapi<{ parser: { code: string } }>('GET', `/xapi/v1/device-drivers/${id}`);
    expect(stored.parser.code).toBe(WATER_METER_CODEC);

    const panel = page.getByTestId('parser-test');
    await panel.getByLabel('Format').selectOption('hex');
    await panel.getByLabel('Sample packet').fill('00 01 e2 40 00 64');
    await panel.getByLabel('fPort (optional)').fill('1');
    await panel.getByRole('button', { name: 'Run parser test' }).click();
    const result = panel.getByTestId('parser-test-result');
    await expect
      .poll(() => result.getByTestId('parsed-battery.voltage').getByTestId('parsed-value').textContent())
      .toBe('3');
    expect(await result.getByTestId('parsed-volume').getByTestId('parsed-value').textContent()).toBe(
      '123.456',
    );
    expect(await result.getByTestId('parser-test-codec-warnings').textContent()).toContain(
      'battery voltage low: 3 V',
    );
    expect(await result.getByTestId('parser-test-logs').textContent()).toBe('fPort 1 bytes 6');
    await h.shot('drivers-02b-codec-test');

    await panel.getByLabel('fPort (optional)').fill('3');
    await panel.getByRole('button', { name: 'Run parser test' }).click();
    await expect
      .poll(() => result.getByTestId('parser-test-errors').textContent())
      .toContain('unknown FPort 3');
  });

  it('creates a template, links it on a device page and copies it', async () => {
    const { page } = h;
    await nav(page, 'Templates');
    await page.getByRole('heading', { name: 'Device templates', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'New template' }).click();
    await page.getByLabel('Title').fill('Basement meter');
    // No driver, the binary one and the codec.
    await expect.poll(() => page.getByLabel('Driver').locator('option').count()).toBe(3);
    await page.getByLabel('Driver').selectOption({ label: 'Meter (binary)' });
    await page.getByLabel('Tags').fill('metered');
    await page.getByLabel('Managed groups').fill('basement');
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.waitForURL(/#\/templates\/[0-9a-f-]{36}$/);
    seen.templateId = page.url().split('/').at(-1);
    await expect.poll(() => page.getByTestId('template-device-count').textContent()).toBe('0 linked devices');

    await page.goto(`${h.server.baseUrl}/#/devices/${seen.deviceId}`);
    await page.getByTestId('device-title').waitFor();
    await page.getByTestId('device-template').getByRole('button', { name: 'Link template' }).click();
    const dialog = page.getByRole('dialog', { name: 'Link a template' });
    await expect.poll(() => dialog.getByLabel('Template').inputValue()).toBe(seen.templateId);
    await dialog.getByRole('button', { name: 'Link' }).click();
    await expect
      .poll(() => page.getByTestId('device-template').getByRole('link').textContent())
      .toBe('Basement meter');
    const device = await xapi<{
      deviceTemplateId: string;
      deviceDriverId: string;
      tags: string[];
      groups: string[];
    }>('GET', `/xapi/v1/virtual-devices/${seen.deviceId}`);
    expect(device).toMatchObject({ deviceTemplateId: seen.templateId, deviceDriverId: seen.driverId });
    expect(device.tags.sort()).toEqual(['cellar', 'metered']);
    expect(device.groups).toEqual(['basement']);
    await h.shot('drivers-03-device-template');

    await nav(page, 'Templates');
    const row = page.getByTestId('template-row').filter({ hasText: 'Basement meter' });
    await expect.poll(() => row.getByTestId('template-linked').textContent()).toMatch(/^\s*1\s*$/);
    await row.getByRole('button', { name: /Copy/ }).click();
    const copy = page.getByRole('dialog', { name: 'Copy template' });
    await copy.getByRole('button', { name: 'Copy', exact: true }).click();
    await expect.poll(() => copy.getByTestId('copy-done').textContent()).toContain('Basement meter (copy)');
    await copy.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => page.getByTestId('template-row').count()).toBe(2);
    await h.shot('drivers-04-templates');

    await page
      .getByTestId('template-row')
      .filter({ hasText: 'Basement meter (copy)' })
      .getByRole('button', { name: /Delete/ })
      .click();
    await page
      .getByRole('dialog', { name: 'Delete template' })
      .getByRole('button', { name: 'Delete' })
      .click();
    await expect.poll(() => page.getByTestId('template-row').count()).toBe(1);
  });

  it('imports a CSV of three devices, follows the job to its end and lists the bad row', async () => {
    const { page } = h;
    await nav(page, 'Devices');
    await page.getByRole('button', { name: 'Import CSV' }).click();
    const dialog = page.getByRole('dialog', { name: 'Import devices from CSV' });
    const csv = [
      'device_id,title,connectorId,deviceDriverId,tags',
      `imp-1,Imported 1,${seen.connectorId},${seen.driverId},north`,
      `imp-2,Imported 2,${seen.connectorId},${seen.driverId},south;east`,
      // The device id is taken on this connector: the server refuses the row.
      `meter-0,Imported 3,${seen.connectorId},${seen.driverId},`,
    ].join('\n');
    await dialog
      .getByLabel('CSV file')
      .setInputFiles({ name: 'devices.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await dialog.getByRole('button', { name: 'Start import' }).click();
    const progress = dialog.getByTestId('import-progress');
    await expect.poll(() => progress.getAttribute('data-status'), { timeout: 20_000 }).toBe('finished');
    expect(await progress.locator('progress').getAttribute('value')).toBe('100');
    expect(await dialog.getByTestId('import-status').textContent()).toBe(
      'Import finished: 2 imported, 1 failed.',
    );
    const errors = dialog.getByTestId('import-errors').locator('tbody tr');
    expect(await errors.count()).toBe(1);
    expect(await errors.first().textContent()).toMatch(/^4\s*DEVICE_ID_TAKEN/);
    await h.shot('drivers-05-import-done');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => page.getByTestId('device-row').count()).toBe(3);
  });

  it('adds a tag to two devices at once and removes it again (checked through the XAPI)', async () => {
    const { page } = h;
    await page.getByLabel('Search').fill('Imported');
    const rows = page.getByTestId('device-row');
    await expect.poll(() => rows.count()).toBe(2);
    // Keyboard: the select-all box is reached and ticked without a mouse.
    const selectAll = page.getByLabel('Select all devices on this page');
    await selectAll.focus();
    await page.keyboard.press('Space');
    await expect.poll(() => page.getByTestId('bulk-bar').textContent()).toContain('2 selected');
    await page.getByRole('button', { name: 'Edit selected' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit 2 devices' });
    await dialog.getByLabel('Add tags').fill('batch-7');
    await h.shot('drivers-06-bulk-edit');
    await dialog.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.getByTestId('bulk-message').textContent()).toBe('2 devices changed.');

    const tagged = await xapi<{ data: { device_id: string; tags: string[] }[] }>(
      'GET',
      '/xapi/v1/virtual-devices?filter[tag]=batch-7&sort=device_id',
    );
    expect(tagged.data.map((d) => [d.device_id, d.tags])).toEqual([
      ['imp-1', ['north', 'batch-7']],
      ['imp-2', ['south', 'east', 'batch-7']],
    ]);
    await expect.poll(() => rows.first().textContent()).toContain('batch-7');
    await h.shot('drivers-07-bulk-done');

    await page.getByRole('button', { name: 'Remove tags' }).click();
    const remove = page.getByRole('dialog', { name: 'Remove tags from 2 devices' });
    await remove.getByLabel('batch-7').check();
    await remove.getByRole('button', { name: 'Remove' }).click();
    await expect
      .poll(() => page.getByTestId('bulk-message').textContent())
      .toBe('Tags removed from 2 devices.');
    const after = await xapi<{ meta: { total: number } }>(
      'GET',
      '/xapi/v1/virtual-devices?filter[tag]=batch-7',
    );
    expect(after.meta.total).toBe(0);

    // The driver page in German and dark, for the screenshot review.
    await page.goto(`${h.server.baseUrl}/#/drivers/${seen.driverId}`);
    await page.getByLabel('Language').selectOption('de');
    await page.getByTestId('theme-toggle').click();
    await page.getByTestId('driver-heading').waitFor();
    await h.shot('drivers-08-driver-dark-de');
    expect(h.foreignRequests, 'no request leaves loopback').toEqual([]);
  });
});
