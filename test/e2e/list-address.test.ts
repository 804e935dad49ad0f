import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { loginXapi, signIn, type Xapi } from './support/seed.js';

const EMAIL = 'address@stellwerk.test';
const PASSWORD = 'lists remember their search';

/**
 * A list's search, sort and filters live in the address in Chromium: a reload, the back button
 * and a copied link open the devices list as the user left it; a sort the routes cannot take is
 * ignored rather than sent.
 */
let h: ConsoleHarness;
let xapi: Xapi;

const rowTitles = () => h.page.locator('[data-testid="device-row"] a[href^="#/devices/"]').allTextContents();

describe('list state in the address (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    const cellar = await xapi('POST', '/xapi/v1/connectors', { title: 'Cellar hooks', type: 'webhook-in' });
    const roof = await xapi('POST', '/xapi/v1/connectors', { title: 'Roof hooks', type: 'webhook-in' });
    for (const [id, title, connector] of [
      ['pump-1', 'Pump north', cellar],
      ['pump-2', 'Pump south', roof],
      ['pump-3', 'Pump east', cellar],
      ['meter-1', 'Water meter', cellar],
    ] as const)
      await xapi('POST', '/xapi/v1/virtual-devices', { device_id: id, title, connectorId: connector.id });
    await signIn(h.page, h.server.baseUrl, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('keeps search, sort and connector through a reload and the back button', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/devices`);
    await page.getByTestId('device-row').first().waitFor();
    expect(await rowTitles()).toHaveLength(4);

    await page.getByLabel('Search').fill('pump');
    await page.waitForURL(/#\/devices\?q=pump$/);
    await page.getByLabel('Connector').selectOption({ label: 'Cellar hooks' });
    await page.getByRole('button', { name: /^Title/ }).click();
    await page.waitForURL(/sort=-title/);
    await expect.poll(rowTitles).toEqual(['Pump north', 'Pump east']);
    expect(new URL(page.url()).hash).toMatch(/connectorId=[0-9a-f-]{36}/);

    await page.reload();
    await expect.poll(rowTitles).toEqual(['Pump north', 'Pump east']);
    expect(await page.getByLabel('Search').inputValue()).toBe('pump');
    expect(await page.getByLabel('Connector').locator('option:checked').textContent()).toBe('Cellar hooks');

    await page.getByRole('link', { name: 'Pump east' }).click();
    await page.getByRole('heading', { name: 'Pump east', level: 1 }).waitFor();
    await page.goBack();
    await expect.poll(rowTitles).toEqual(['Pump north', 'Pump east']);
    expect(await page.getByLabel('Search').inputValue()).toBe('pump');

    await page.getByLabel('Search').fill('');
    await page.getByLabel('Connector').selectOption({ label: 'All connectors' });
    await expect.poll(() => new URL(page.url()).hash).toBe('#/devices?sort=-title');
  });

  it('opens a copied link as it was, and ignores a sort the list cannot take', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/devices?q=meter`);
    await page.reload();
    await expect.poll(rowTitles).toEqual(['Water meter']);

    await page.goto(`${h.server.baseUrl}/#/devices?sort=title%3Bdrop`);
    await page.reload();
    await expect.poll(rowTitles).toEqual(['Pump east', 'Pump north', 'Pump south', 'Water meter']);
    expect(await page.getByRole('alert').count()).toBe(0);
    await expect.poll(() => new URL(page.url()).hash).toBe('#/devices');
  });

  it('keeps the connectors list’s type filter through a reload', async () => {
    const { page } = h;
    await xapi('POST', '/xapi/v1/connectors', { title: 'Broker in the hall', type: 'mqtt-broker' });
    await page.goto(`${h.server.baseUrl}/#/connectors`);
    const titles = () => page.locator('[data-testid="connector-row"] td strong').allTextContents();
    await expect.poll(titles).toHaveLength(3);
    await page.locator('#connector-type-filter').selectOption('webhook-in');
    await expect.poll(() => new URL(page.url()).hash).toBe('#/connectors?type=webhook-in');
    await page.reload();
    await expect.poll(titles).toEqual(['Cellar hooks', 'Roof hooks']);
    expect(await page.locator('#connector-type-filter').inputValue()).toBe('webhook-in');
  });
});
