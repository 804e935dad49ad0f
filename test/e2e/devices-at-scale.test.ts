import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDevices } from '../../bench/scale-seed.js';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { loginXapi, signIn, type Xapi } from './support/seed.js';

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
let xapi: Xapi;

describe('the devices page with 100,000 devices (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
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

  it('shows the first page with the exact total, and a search finds one meter among them', async () => {
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
      .toMatch(new RegExp(`of ${DEVICES.toLocaleString('en-US')} .*Page 1 of ${DEVICES / 25}`));

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

  it('walks the pages by cursor: each next page continues after the last row, and back again', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/overview`);
    await page.locator('main h1').first().waitFor();
    await page.goto(`${h.server.baseUrl}/#/devices`);
    await expect.poll(() => page.getByTestId('device-row').count()).toBe(25);
    const asked: URL[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname === '/xapi/v1/virtual-devices') asked.push(url);
    });
    // The device ids of the rows shown, from their links (#/devices/<id>).
    const ids = async (): Promise<string[]> => {
      const shown: string[] = [];
      for (const link of await page.getByTestId('device-row').locator('a[href^="#/devices/"]').all())
        shown.push(((await link.getAttribute('href')) ?? '').slice('#/devices/'.length));
      return shown;
    };
    const pager = page.locator('.dev-pager').first();
    const seen = [await ids()];
    const timings: number[] = [];
    for (let next = 2; next <= 4; next++) {
      const clicked = performance.now();
      await pager.getByRole('button', { name: 'Next' }).click();
      await expect.poll(() => pager.textContent()).toContain(`Page ${next} of`);
      await expect.poll(async () => (await ids()).join()).not.toBe(seen.at(-1)!.join());
      timings.push(performance.now() - clicked);
      seen.push(await ids());
    }
    // Pages 2–4 were asked for by the cursor of the page before, not by an offset.
    expect(asked.map((url) => url.searchParams.has('after'))).toEqual([true, true, true]);
    // The same 100 devices, in the same order, as the first 100 by title asked for in one page.
    const firstHundred = await xapi<{ data: { id: string }[] }>(
      'GET',
      '/xapi/v1/virtual-devices?page=1&pageSize=100&sort=title',
    );
    expect(seen.flat()).toEqual(firstHundred.data.map((device) => device.id));
    await pager.getByRole('button', { name: 'Previous' }).click();
    await expect.poll(() => pager.textContent()).toContain('Page 3 of');
    await expect.poll(async () => (await ids()).join()).toBe(seen[2]!.join());
    console.log(
      `devices page at ${DEVICES.toLocaleString('en-US')} devices: next page by cursor ` +
        timings.map((ms) => `${Math.round(ms)} ms`).join(', '),
    );
  }, 90_000);
});
