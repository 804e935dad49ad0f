import type { Dialog } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pmtilesArchive, pyramid, solidPng, TILE_TYPE } from '../integration/support/pmtiles-archive.js';
import { seriousViolations } from './support/axe-check.js';
import { colourShare } from './support/map-colour.js';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { loginXapi, signIn, type Xapi } from './support/seed.js';

const EMAIL = 'surveyor@stellwerk.test';
const PASSWORD = 'triangulation 1615 snellius';
const BASE_RGB: [number, number, number] = [120, 190, 120];
const PLAN_RGB: [number, number, number] = [214, 40, 150];
const OPACITY = 0.85;
// What the plan looks like drawn at the default opacity over the basemap's tiles.
const BLENDED = PLAN_RGB.map((c, i) => Math.round(OPACITY * c + (1 - OPACITY) * BASE_RGB[i]!)) as [
  number,
  number,
  number,
];
// The twin stands in the middle of a plan about 75 m × 55 m: at zoom 18 the whole plan fits the map.
const TWIN = { latitude: 47.3765, longitude: 8.541 };
const CORNERS = [
  { latitude: '47.37675', longitude: '8.5405' },
  { latitude: '47.37675', longitude: '8.5415' },
  { latitude: '47.37625', longitude: '8.5415' },
  { latitude: '47.37625', longitude: '8.5405' },
];

/**
 * Maps at site level in Chromium: a generated `.pmtiles` archive uploaded as the account's basemap
 * with the progress shown, then a site plan image uploaded and placed by its corners, and the map
 * at zoom 18 showing the plan under the twin's marker; axe on the new section and dialogs.
 */
let h: ConsoleHarness;
let xapi: Xapi;
let accountId: string;

describe('basemap upload and site plans (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    accountId = (await xapi<{ data: { id: string }[] }>('GET', '/xapi/v1/accounts')).data[0]!.id;
    await xapi('POST', '/xapi/v1/digital-twins', { title: 'Pump house', ...TWIN });
    await signIn(h.page, h.server.baseUrl, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('uploads a .pmtiles basemap on the account page with its progress shown', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/accounts/${accountId}`);
    const section = page.getByTestId('basemap-upload');
    await section.waitFor();
    expect(await page.getByTestId('basemap-current').textContent()).toMatch(/No basemap uploaded/);

    // A slow uplink (256 KiB/s) so that the progress of the ~1 MiB upload can be watched and photographed.
    const cdp = await h.context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 256 * 1024,
    });
    const archive = pmtilesArchive(
      pyramid(0, 5, () => solidPng(BASE_RGB)),
      { tileType: TILE_TYPE.png, center: [TWIN.longitude, TWIN.latitude, 5] },
    );
    await page.getByTestId('basemap-file').setInputFiles({
      name: 'site.pmtiles',
      mimeType: 'application/vnd.pmtiles',
      buffer: archive,
    });
    const progress = page.getByTestId('basemap-progress');
    await progress.waitFor();
    // Part of the file sent, not all of it: the bar moves with the upload.
    await expect
      .poll(
        async () =>
          progress.locator('progress').evaluate((bar) => (bar as unknown as { value: number }).value),
        { timeout: 20_000 },
      )
      .toBeGreaterThan(0);
    expect(await progress.textContent()).toMatch(/Uploading site\.pmtiles: \d+ %/);
    await h.shot('site-plans-01-basemap-progress');
    await page.getByTestId('basemap-message').or(page.getByRole('alert')).waitFor({ timeout: 60_000 });
    expect(await page.getByRole('alert').count()).toBe(0);
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    });
    expect(archive.length).toBeGreaterThan(512 * 1024);
    expect(await page.getByTestId('basemap-current').textContent()).toMatch(/KiB, uploaded/);

    const account = await xapi<{ uiSettings: { mapStyleUrl?: string } }>(
      'GET',
      `/xapi/v1/accounts/${accountId}`,
    );
    expect(account.uiSettings.mapStyleUrl).toMatch(/^\/xapi\/v1\/basemaps\/[0-9a-f-]{36}\.pmtiles$/);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('places a site plan by its corners and shows it under the twin at zoom 18', async () => {
    const { page } = h;
    const planReads: number[] = [];
    page.on('response', (response) => {
      if (/\/xapi\/v1\/site-plans\/[^/]+\/image/.test(response.url())) planReads.push(response.status());
    });
    // The upload saved the setting: leaving the account page asks nothing about unsaved changes.
    const questions: string[] = [];
    const recordQuestion = (dialog: Dialog) => {
      questions.push(dialog.message());
      void dialog.dismiss();
    };
    page.on('dialog', recordQuestion);
    await page.goto(`${h.server.baseUrl}/#/map`);
    await expect
      .poll(async () => questions.length > 0 || (await page.getByTestId('twin-map').count()) > 0)
      .toBe(true);
    page.off('dialog', recordQuestion);
    expect(questions).toEqual([]);
    // A fresh load reads the session again, with the account's new basemap.
    await page.reload();
    await page.getByTestId('twin-marker').waitFor();
    await page.locator('.tw-map canvas.maplibregl-canvas').waitFor();
    expect(await page.getByTestId('twin-map').getAttribute('data-basemap')).toBe('pmtiles');

    await page.getByTestId('site-plans-open').click();
    const dialog = page.getByTestId('site-plans-dialog');
    await dialog.getByTestId('site-plan-add').click();
    await dialog.getByLabel('Title').fill('Pump house, ground floor');
    await dialog.getByTestId('site-plan-file').setInputFiles({
      name: 'ground-floor.png',
      mimeType: 'image/png',
      buffer: solidPng(PLAN_RGB, 200),
    });
    const corners = dialog.getByTestId('site-plan-corner');
    for (const [i, corner] of CORNERS.entries()) {
      await corners.nth(i).getByLabel('Latitude').fill(corner.latitude);
      await corners.nth(i).getByLabel('Longitude').fill(corner.longitude);
    }
    expect(await seriousViolations(page)).toEqual([]);
    await h.shot('site-plans-02-editor');
    await dialog.getByRole('button', { name: 'Save site plan' }).click();
    const row = dialog.getByTestId('site-plan-row');
    await row.waitFor();
    expect(await row.textContent()).toMatch(/Pump house, ground floor · placed · \d/);

    const plans = await xapi<{ data: { corners: number[][]; image: { type: string } | null }[] }>(
      'GET',
      '/xapi/v1/site-plans',
    );
    expect(plans.data[0]!.corners[0]).toEqual([8.5405, 47.37675]);
    expect(plans.data[0]!.image?.type).toBe('image/png');

    await row.getByRole('button', { name: 'Show on map' }).click();
    const map = page.getByTestId('twin-map');
    await expect.poll(async () => Number(await map.getAttribute('data-zoom')), { timeout: 10_000 }).toBe(18);
    await expect.poll(() => colourShare(page, BLENDED), { timeout: 15_000 }).toBeGreaterThan(0.04);
    expect(planReads).toContain(200);

    // The marker stands on the plan: the pixels around its foot are the plan's.
    const marker = await page.getByTestId('twin-marker').boundingBox();
    const box = (await map.boundingBox())!;
    expect(marker).not.toBeNull();
    const foot = { x: marker!.x + marker!.width / 2 - box.x, y: marker!.y + marker!.height - box.y };
    expect(Math.abs(foot.x - box.width / 2)).toBeLessThan(40);
    expect(Math.abs(foot.y - box.height / 2)).toBeLessThan(40);
    await h.shot('site-plans-03-plan-under-twin-zoom-18');
    expect(h.foreignRequests).toEqual([]);
  });
});
