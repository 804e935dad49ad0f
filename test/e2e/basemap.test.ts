import fs from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../integration/support/server-process.js';
import {
  pmtilesArchive,
  pyramid,
  solidPng,
  TILE_TYPE,
  vectorTile,
} from '../integration/support/pmtiles-archive.js';
import { colourShare } from './support/map-colour.js';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { loginXapi, signIn, type Xapi } from './support/seed.js';

const EMAIL = 'gerardus@stellwerk.test';
const PASSWORD = 'mercator projection 1569';
const SITE_RGB: [number, number, number] = [214, 64, 150];
const STYLED_RGB: [number, number, number] = [40, 170, 200];

/**
 * A site's own basemap in Chromium, offline: `.pmtiles` archives written by the test into the
 * server's `<STELLWERK_DATA_DIR>/maps/`, chosen by the account's `uiSettings.mapStyleUrl`. Raster
 * tiles are fetched as byte ranges (206) and drawn in their colour; vector tiles get the generated
 * style; a style JSON naming a `pmtiles://` source works; a broken archive falls back to the
 * offline basemap with the notice. No request leaves loopback.
 */
let h: ConsoleHarness;
let xapi: Xapi;
let accountId: string;
let dataDir: string;
const mapResponses: { url: string; status: number; range: string | undefined }[] = [];

async function useBasemap(url: string): Promise<void> {
  await xapi('PUT', `/xapi/v1/accounts/${accountId}`, { uiSettings: { mapStyleUrl: url } });
}

async function openMap(page: Page): Promise<void> {
  // A reload reads the signed-in user's settings (the basemap) afresh.
  await page.goto(`${h.server.baseUrl}/#/map`);
  await page.reload();
  await page.getByTestId('twin-marker').waitFor();
  await page.locator('.tw-map canvas.maplibregl-canvas').waitFor();
}

describe('a site basemap from a .pmtiles archive (Chromium)', () => {
  beforeAll(async () => {
    dataDir = await tempDataDir('stellwerk-e2e-maps-');
    const maps = path.join(dataDir, 'maps');
    await fs.mkdir(maps, { recursive: true });
    const raster = (rgb: [number, number, number]) =>
      pmtilesArchive(
        pyramid(0, 3, () => solidPng(rgb)),
        { tileType: TILE_TYPE.png, center: [13.4, 52.5, 3] },
      );
    await fs.writeFile(path.join(maps, 'site.pmtiles'), raster(SITE_RGB));
    await fs.writeFile(path.join(maps, 'styled.pmtiles'), raster(STYLED_RGB));
    await fs.writeFile(
      path.join(maps, 'style.json'),
      JSON.stringify({
        version: 8,
        sources: { plan: { type: 'raster', url: 'pmtiles:///maps/styled.pmtiles', tileSize: 256 } },
        layers: [{ id: 'plan', type: 'raster', source: 'plan' }],
      }),
    );
    // Every vector tile: a block of buildings (polygons) between roads (lines), hydrants (points).
    const square = (x: number, y: number, size: number): [number, number][] => [
      [x, y],
      [x + size, y],
      [x + size, y + size],
      [x, y + size],
    ];
    const tile = vectorTile('site', [
      ...[0, 1, 2, 3].flatMap((row) =>
        [0, 1, 2, 3].map((column) => ({
          type: 'polygon' as const,
          ring: square(256 + column * 1024, 256 + row * 1024, 640),
        })),
      ),
      ...[0, 1, 2, 3].map((row) => ({
        type: 'line' as const,
        path: [
          [0, 1024 * row + 1000],
          [4096, 1024 * row + 1000],
        ] as [number, number][],
      })),
      ...[0, 1, 2, 3].map((column) => ({
        type: 'point' as const,
        at: [1024 * column + 1000, 1000] as [number, number],
      })),
    ]);
    await fs.writeFile(
      path.join(maps, 'vector.pmtiles'),
      pmtilesArchive(
        pyramid(0, 3, () => tile),
        {
          tileType: TILE_TYPE.mvt,
          metadata: { vector_layers: [{ id: 'site', fields: {} }] },
        },
      ),
    );
    await fs.writeFile(path.join(maps, 'broken.pmtiles'), 'this is not an archive');

    h = await startConsoleHarness({
      STELLWERK_ADMIN_EMAIL: EMAIL,
      STELLWERK_ADMIN_PASSWORD: PASSWORD,
      STELLWERK_DATA_DIR: dataDir,
    });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    accountId = (await xapi<{ data: { id: string }[] }>('GET', '/xapi/v1/accounts')).data[0]!.id;
    await xapi('POST', '/xapi/v1/digital-twins', { title: 'Pump house', latitude: 52.52, longitude: 13.405 });
    h.page.on('response', (response) => {
      if (new URL(response.url()).pathname.startsWith('/maps/'))
        mapResponses.push({
          url: response.url(),
          status: response.status(),
          range: response.request().headers().range,
        });
    });

    const { page } = h;
    await signIn(page, h.server.baseUrl, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await h?.close();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('draws raster tiles of the archive, read as byte ranges from /maps/', async () => {
    await useBasemap('/maps/site.pmtiles');
    const { page } = h;
    await openMap(page);
    const map = page.getByTestId('twin-map');
    expect(await map.getAttribute('data-basemap')).toBe('pmtiles');
    await expect.poll(() => colourShare(page, SITE_RGB), { timeout: 15_000 }).toBeGreaterThan(0.5);
    await h.shot('basemap-01-pmtiles-raster');

    const archiveReads = mapResponses.filter((r) => r.url.endsWith('/maps/site.pmtiles'));
    expect(archiveReads.length).toBeGreaterThanOrEqual(2);
    for (const read of archiveReads) {
      expect(read.range).toMatch(/^bytes=\d+-\d+$/);
      expect(read.status).toBe(206);
    }
    expect(await page.getByTestId('basemap-notice').count()).toBe(0);
  });

  it('draws vector tiles with the generated style, in both themes', async () => {
    await useBasemap('/maps/vector.pmtiles');
    const { page } = h;
    await openMap(page);
    const map = page.getByTestId('twin-map');
    await expect
      .poll(async () => Number(await map.getAttribute('data-rendered-site-features')), { timeout: 15_000 })
      .toBeGreaterThan(3);
    await h.shot('basemap-02-pmtiles-vector');
    await page.getByTestId('theme-toggle').click();
    await page.waitForTimeout(1000);
    await expect
      .poll(async () => Number(await map.getAttribute('data-rendered-site-features')), { timeout: 15_000 })
      .toBeGreaterThan(3);
    await h.shot('basemap-03-pmtiles-vector-dark');
    await page.getByTestId('theme-toggle').click();
  });

  it('follows a style JSON whose source is a pmtiles:// archive on this server', async () => {
    await useBasemap('/maps/style.json');
    const { page } = h;
    await openMap(page);
    expect(await page.getByTestId('twin-map').getAttribute('data-basemap')).toBe('style');
    await expect.poll(() => colourShare(page, STYLED_RGB), { timeout: 15_000 }).toBeGreaterThan(0.5);
    expect(mapResponses.some((r) => r.url.endsWith('/maps/styled.pmtiles') && r.status === 206)).toBe(true);
  });

  it('falls back to the offline basemap with the notice when the archive cannot be read', async () => {
    await useBasemap('/maps/broken.pmtiles');
    const { page } = h;
    await openMap(page);
    await expect
      .poll(() => page.getByTestId('basemap-notice').textContent(), { timeout: 15_000 })
      .toContain('/maps/broken.pmtiles');
    const map = page.getByTestId('twin-map');
    expect(await map.getAttribute('data-basemap')).toBe('offline');
    await expect
      .poll(async () => Number(await map.getAttribute('data-rendered-countries')), { timeout: 15_000 })
      .toBeGreaterThan(20);
    await h.shot('basemap-04-pmtiles-fallback');
    expect(h.foreignRequests, 'no request leaves loopback').toEqual([]);
  });
});
