import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator } from 'playwright-core';
import { seriousViolations } from './support/axe-check.js';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { loginXapi, signIn, type Xapi } from './support/seed.js';

const EMAIL = 'mercator@stellwerk.test';
const PASSWORD = 'projection of the globe 1569';

/**
 * A twin's place in Chromium: the twin form's address and location picker (a click places the
 * marker, a drag moves it, the fields follow) and the saved twin on the map at that spot; the map
 * page filtered by tag and by status (on the server); the spec's view parameters in the console on
 * the map page and on a dashboard's map widget.
 */
let h: ConsoleHarness;
let xapi: Xapi;
/** A filter chip of the map page (marker buttons carry twin titles, which may contain the tag). */
const chip = (name: string) => h.page.getByTestId('map-filters').getByRole('button', { name, exact: true });
const ids: Record<string, string> = {};

type Twin = {
  id: string;
  latitude: number | null;
  longitude: number | null;
  address: Record<string, string> | null;
};

const centre = async (locator: Locator) => {
  const box = (await locator.boundingBox())!;
  return { x: box.x + box.width / 2, y: box.y + box.height / 2, box };
};

describe('twin address, location picker, map filters and view parameters (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    const twin = (body: Record<string, unknown>) => xapi('POST', '/xapi/v1/digital-twins', body);
    ids.pump = (await twin({ title: 'Pump house', tags: ['pump'], latitude: 47.0, longitude: 8.0 })).id;
    ids.oldPump = (
      await twin({ title: 'Old pump', tags: ['pump'], status: 'inactive', latitude: 47.1, longitude: 8.2 })
    ).id;
    ids.valve = (await twin({ title: 'Valve pit', tags: ['valve'], latitude: 47.2, longitude: 8.4 })).id;
    ids.tank = (await twin({ title: 'Water tank', tags: ['tank'] })).id;
    const widgets = [{ id: 'w-map', type: 'map', title: 'Site map', x: 0, y: 0, w: 6, h: 5 }];
    ids.dashboard = (
      await xapi('POST', '/xapi/v1/dashboards', { title: 'Site board', layout: { version: 1, widgets } })
    ).id;
    await h.page.emulateMedia({ reducedMotion: 'reduce' });
    await signIn(h.page, h.server.baseUrl, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('sets an address, places the twin with a click and a drag on the picker, and shows it there', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/twins/${ids.tank}`);
    await page.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('dialog');
    await form.getByLabel('Street and number').fill('Seestrasse 12');
    await form.getByLabel('Postal code').fill('8002');
    await form.getByLabel('City').fill('Zürich');
    const picker = form.getByTestId('location-picker');
    const canvas = picker.locator('canvas.maplibregl-canvas');
    await canvas.waitFor();
    // Drawn once idle: the offline basemap's countries are on the canvas.
    await expect
      .poll(
        async () => Number(await picker.getByTestId('twin-map').getAttribute('data-rendered-countries')),
        {
          timeout: 15_000,
        },
      )
      .toBeGreaterThan(0);
    await canvas.scrollIntoViewIfNeeded();
    const map = await centre(canvas);
    await page.mouse.click(map.x + 30, map.y - 20);
    const latitude = form.getByLabel('Latitude');
    const longitude = form.getByLabel('Longitude');
    await expect.poll(() => latitude.inputValue()).not.toBe('');
    const marker = picker.getByTestId('picker-marker');
    const placed = await centre(marker);
    expect(Math.abs(placed.x - (map.x + 30))).toBeLessThan(3);
    expect(Math.abs(placed.y - (map.y - 20))).toBeLessThan(3);
    const clicked = {
      latitude: Number(await latitude.inputValue()),
      longitude: Number(await longitude.inputValue()),
    };

    // Dragging the marker east moves the longitude, not the latitude (beyond rounding).
    await page.mouse.move(placed.x, placed.y);
    await page.mouse.down();
    await page.mouse.move(placed.x + 20, placed.y, { steps: 4 });
    await page.mouse.move(placed.x + 40, placed.y, { steps: 4 });
    await page.mouse.up();
    await expect.poll(async () => Number(await longitude.inputValue())).toBeGreaterThan(clicked.longitude);
    expect(Math.abs(Number(await latitude.inputValue()) - clicked.latitude)).toBeLessThan(0.2);
    // A typed value out of range is refused in the form, next to the field.
    await latitude.fill('95');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByText('Latitude lies between −90 and 90.').waitFor();
    await latitude.fill(String(clicked.latitude));
    const dragged = Number(await longitude.inputValue());
    await h.shot('twin-places-01-picker');
    expect(await seriousViolations(page)).toEqual([]);
    await form.getByRole('button', { name: 'Save' }).click();
    await form.waitFor({ state: 'detached' });

    const saved = await xapi<Twin>('GET', `/xapi/v1/digital-twins/${ids.tank}`);
    expect(saved.address).toEqual({ street: 'Seestrasse 12', postalCode: '8002', city: 'Zürich' });
    expect(saved.latitude).toBe(clicked.latitude);
    expect(saved.longitude).toBe(dragged);
    await expect
      .poll(() => page.getByTestId('twin-address-line').textContent())
      .toBe('Seestrasse 12, 8002 Zürich');
    const locationCard = page.getByRole('region', { name: 'Location' });
    await locationCard.getByTestId('picker-marker').waitFor();
    // The twin page's map spans its card (a card places its children at their own width).
    const cardWidth = (await locationCard.boundingBox())!.width;
    const mapWidth = (await locationCard.getByTestId('twin-map').boundingBox())!.width;
    expect(mapWidth).toBeGreaterThan(cardWidth * 0.8);
    await h.shot('twin-places-02-twin-page');

    // On the map page, alone under its tag, the twin's marker stands where the map is centred on it.
    await page.goto(`${h.server.baseUrl}/#/map`);
    await chip('tank').click();
    const markers = page.getByTestId('twin-marker');
    await expect.poll(() => markers.count(), { timeout: 15_000 }).toBe(1);
    expect(await markers.getAttribute('data-twin-id')).toBe(ids.tank);
    const siteMap = await centre(page.getByTestId('twin-map'));
    const pin = (await markers.boundingBox())!;
    expect(Math.abs(pin.x + pin.width / 2 - siteMap.x)).toBeLessThan(6);
    await chip('tank').click();
  });

  it('filters the map by tag and by status, on the server', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/map`);
    const markers = page.getByTestId('twin-marker');
    // Read in one go in the page: markers are replaced while a filter applies.
    type Element = { getAttribute(name: string): string | null };
    const shown = async () =>
      (await markers.evaluateAll((all: Element[]) => all.map((m) => m.getAttribute('data-twin-id')))).sort();
    await expect
      .poll(shown, { timeout: 15_000 })
      .toEqual([ids.pump, ids.oldPump, ids.valve, ids.tank].sort());
    await chip('pump').click();
    await expect.poll(shown).toEqual([ids.pump, ids.oldPump].sort());
    const request = page.waitForRequest((r) =>
      decodeURIComponent(r.url()).includes('filter[status]=inactive'),
    );
    await chip('Inactive').click();
    expect(decodeURIComponent((await request).url())).toContain('filter[tag]=pump');
    await expect.poll(shown).toEqual([ids.oldPump]);
    expect(await chip('Inactive').getAttribute('aria-pressed')).toBe('true');
    await h.shot('twin-places-03-map-filtered');
    expect(await seriousViolations(page)).toEqual([]);
    await chip('pump').click();
    await chip('Active').click();
    await expect.poll(shown).toEqual([ids.pump, ids.oldPump, ids.valve, ids.tank].sort());
    await page.getByRole('button', { name: 'Show all twins' }).click();
    await expect.poll(shown).toEqual([ids.pump, ids.oldPump, ids.valve, ids.tank].sort());
  });

  it('honours zoomlock, pitch and language on the map page, and zoomlock and pitch on a dashboard map widget', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/map?zoomlock=true&pitch=40&language=de`);
    const map = page.getByTestId('twin-map');
    await expect.poll(() => map.getAttribute('data-pitch'), { timeout: 15_000 }).toBe('40');
    expect(await map.getAttribute('data-zoom-lock')).toBe('true');
    await page.getByRole('group', { name: 'Nach Status filtern' }).waitFor();
    expect(await page.locator('.maplibregl-ctrl-zoom-in').count()).toBe(0);
    // The view's language lasts while the page is shown; the user's comes back after it.
    await page.goto(`${h.server.baseUrl}/#/twins`);
    await page.getByRole('heading', { name: 'Digital twins', level: 1 }).waitFor();

    await page.goto(`${h.server.baseUrl}/#/dashboards/${ids.dashboard}?zoomlock=true&pitch=30`);
    const widgetMap = page.getByTestId('map-widget').getByTestId('twin-map');
    await expect.poll(() => widgetMap.getAttribute('data-pitch'), { timeout: 15_000 }).toBe('30');
    expect(await widgetMap.getAttribute('data-zoom-lock')).toBe('true');
    expect(await page.getByTestId('map-widget').locator('.maplibregl-ctrl-zoom-in').count()).toBe(0);
    const zoom = await widgetMap.getAttribute('data-zoom');
    const { x, y } = await centre(widgetMap);
    await page.mouse.move(x, y);
    await page.mouse.wheel(0, -600);
    await page.mouse.dblclick(x, y);
    await page.waitForTimeout(300);
    expect(await widgetMap.getAttribute('data-zoom')).toBe(zoom);
    await h.shot('twin-places-04-dashboard-map-locked');
    expect(await seriousViolations(page)).toEqual([]);

    // Without the parameters the same widget zooms and stands upright.
    await page.goto(`${h.server.baseUrl}/#/dashboards/${ids.dashboard}`);
    await expect.poll(() => widgetMap.getAttribute('data-zoom-lock')).toBe('false');
    expect(await widgetMap.getAttribute('data-pitch')).toBe('0');
    expect(await page.getByTestId('map-widget').locator('.maplibregl-ctrl-zoom-in').count()).toBe(1);
    expect(h.foreignRequests, 'no request leaves loopback').toEqual([]);
  });
});
