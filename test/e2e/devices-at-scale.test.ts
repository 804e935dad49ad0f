import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDevices } from '../../bench/scale-seed.js';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { loginXapi, signIn } from './support/seed.js';

const EMAIL = 'utility@stellwerk.test';
const PASSWORD = 'a hundred thousand meters';
const DEVICES = 100_000;

/**
 * The devices page of an account with 100,000 devices (seeded straight into the table, as an import
 * would leave them): the time from opening the page to the first page of rows, and from typing a
 * search to its one result, measured in Chromium and printed for the performance notes. The bounds
 * only catch a page that reads the whole account; the goal (interactive in under 1 s on a quiet
 * machine) is a benchmark figure, not a test bound.
 */

let h: ConsoleHarness;

describe('the devices page with 100,000 devices (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    const xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    const connector = await xapi<{ id: string; accountId: string }>('POST', '/xapi/v1/connectors', {
      title: 'Meter network',
      type: 'webhook-in',
    });
    const db = new pg.Client({ connectionString: h.databaseUrl });
    await db.connect();
    try {
      await seedDevices(db, connector.accountId, connector.id, DEVICES);
      await db.query('VACUUM ANALYZE virtual_devices');
    } finally {
      await db.end();
    }
    await h.page.emulateMedia({ reducedMotion: 'reduce' });
    await signIn(h.page, h.server.baseUrl, EMAIL, PASSWORD);
  }, 240_000);

  afterAll(async () => {
    await h?.close();
  });

  it('shows the first page with an estimated total, and a search finds one meter among them', async () => {
    const { page } = h;
    // Warm: the console's code is loaded once, as for an engineer who signed in before.
    await page.goto(`${h.server.baseUrl}/#/overview`);
    await page.locator('main h1').first().waitFor();

    const opened = performance.now();
    await page.goto(`${h.server.baseUrl}/#/devices`);
    await page.getByTestId('device-row').first().waitFor();
    const firstRows = performance.now() - opened;
    await expect.poll(() => page.getByTestId('device-row').count()).toBe(25);
    await expect
      .poll(() => page.locator('.dev-pager').first().textContent())
      .toMatch(/of about \d{2,3},\d{3}/);

    const typed = performance.now();
    await page.locator('#device-search').fill('meter-0099999');
    await expect.poll(() => page.getByTestId('device-row').count(), { timeout: 20_000 }).toBe(1);
    const searched = performance.now() - typed;
    expect(await page.getByTestId('device-row').first().textContent()).toContain('Water meter 99999, zone');
    await h.shot('devices-at-100k');

    console.log(
      `devices page at ${DEVICES.toLocaleString('en-US')} devices: first rows ${Math.round(firstRows)} ms, ` +
        `search to its result ${Math.round(searched)} ms`,
    );
    expect(firstRows).toBeLessThan(10_000);
    expect(searched).toBeLessThan(10_000);
  }, 90_000);
});
