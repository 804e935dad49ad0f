import path from 'node:path';
import { chromium, type Browser, type Page, type WebSocket as PageSocket } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe-check.js';
import {
  CHROMIUM,
  SCREENSHOT_DIR,
  startConsoleHarness,
  type ConsoleHarness,
} from './support/console-harness.js';
import { watchNativeDialogs } from './support/native-dialogs.js';
import {
  addRoutedState,
  apiToken,
  seedMqttDevice,
  signIn,
  xapiClient,
  type SeededDevice,
  type Xapi,
} from './support/seed.js';

const EMAIL = 'ada@stellwerk.test';
const PASSWORD = 'analytical engine 1843';

/**
 * Public dashboards in Chromium: the owner publishes a dashboard from its page, a browser context
 * that never signed in opens the link (zoom lock and German from the link's parameters), both views
 * stay equal to the server's value while values are published with mosquitto_pub and their live
 * sockets are dropped and reconnect, and after unpublishing the link is refused. A new key and
 * unpublishing ask first in the console's own dialog, never the browser's.
 */
let h: ConsoleHarness;
let xapi: Xapi;
let device: SeededDevice;
/** A separate browser: its contexts share nothing with the signed-in console's profile. */
let anonymousBrowser: Browser;
const ids: Record<string, string> = {};
let link = '';
/** The public view left open while the owner unpublishes. */
let openView: Page | undefined;
/** Paths each anonymous page requested. */
const requested = new WeakMap<Page, string[]>();

/**
 * Live sockets a page opens for twins, with the twin subscribe frames sent on them (the console's
 * alarm badge keeps a socket of its own, which subscribes to alarms only and is not counted).
 */
function watchSockets(page: Page, path: string) {
  const sockets: { socket: PageSocket; subscribes: number }[] = [];
  page.on('websocket', (socket) => {
    if (!socket.url().includes(path)) return;
    const entry = { socket, subscribes: 0 };
    socket.on('framesent', ({ payload }) => {
      const text = String(payload);
      if (!text.includes('"subscribe"') || !text.includes('"twinIds"')) return;
      if (entry.subscribes++ === 0) sockets.push(entry);
    });
  });
  return sockets;
}

/** Closes the page's WebSockets from inside the page, as a dropped network would (sockets recorded at creation). */
const dropSockets = (page: Page) =>
  page.evaluate(() => {
    const sockets = (globalThis as unknown as { __sockets: { close(): void }[] }).__sockets;
    for (const socket of sockets.splice(0)) socket.close();
  });

const RECORD_SOCKETS = () => {
  const Native = globalThis.WebSocket;
  const sockets: WebSocket[] = [];
  (globalThis as unknown as { __sockets: WebSocket[] }).__sockets = sockets;
  globalThis.WebSocket = class extends Native {
    constructor(...args: ConstructorParameters<typeof Native>) {
      super(...args);
      sockets.push(this);
    }
  };
};

async function anonymousPage(url: string, beforeLoad?: (page: Page) => void): Promise<Page> {
  const context = await anonymousBrowser.newContext({
    viewport: { width: 1280, height: 800 },
    locale: 'en-US',
  });
  const page = await context.newPage();
  const paths: string[] = [];
  requested.set(page, paths);
  page.on('request', (request) => paths.push(new URL(request.url()).pathname));
  await page.addInitScript(RECORD_SOCKETS);
  beforeLoad?.(page);
  await page.goto(url);
  return page;
}

const serverValue = async () =>
  (await xapi<{ value: unknown }>('GET', `/xapi/v1/states/${ids.pressure}`)).value;
const gauge = (page: Page) => page.getByTestId('gauge-value').textContent();

describe('public dashboards end to end (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = xapiClient(h.server.baseUrl, await apiToken(h.server.baseUrl, EMAIL, PASSWORD));
    anonymousBrowser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
    device = await seedMqttDevice(xapi, h.mqttPort, {
      connectorTitle: 'Waterworks gateway',
      driver: { title: 'JSON', parser: { type: 'json' } },
      device: { device_id: 'main-pressure', title: 'Main pressure sensor', referenceId: 'MAIN-1' },
    });
    ids.twin = (
      await xapi('POST', '/xapi/v1/digital-twins', {
        title: 'Main pumping station',
        referenceId: 'MAIN-1',
        latitude: 48.137,
        longitude: 11.575,
        tags: ['site'],
      })
    ).id;
    ids.pressure = await addRoutedState(xapi, ids.twin, {
      key: 'pressure',
      title: 'Outlet pressure',
      unit: 'bar',
      meta: { visual: { type: 'gauge', yAxis: { min: 0, max: 10, unit: 'bar' } } },
    });
    const widget = { title: '', y: 0, h: 4 };
    ids.board = (
      await xapi('POST', '/xapi/v1/dashboards', {
        title: 'Control room',
        layout: {
          version: 1,
          widgets: [
            { ...widget, id: 'g', type: 'gauge', x: 0, w: 4, twinId: ids.twin, stateIds: [ids.pressure] },
            { ...widget, id: 'm', type: 'map', x: 4, w: 8, h: 6, tag: 'site' },
            {
              ...widget,
              id: 'c',
              type: 'line-chart',
              x: 0,
              y: 4,
              w: 4,
              twinId: ids.twin,
              stateIds: [ids.pressure],
              range: '1h',
            },
          ],
        },
      })
    ).id;
  }, 240_000);

  afterAll(async () => {
    await anonymousBrowser?.close();
    await h?.close();
  });

  it('publishes from the dashboard page; the link carries the key once, zoom lock and language', async () => {
    const { page } = h;
    const native = watchNativeDialogs(page);
    await device.publish({ pressure: 4 });
    await expect.poll(serverValue, { timeout: 15_000 }).toBe(4);
    await signIn(page, h.server.baseUrl, EMAIL, PASSWORD);
    await page.goto(`${h.server.baseUrl}/#/dashboards/${ids.board}`);
    await page.getByRole('button', { name: 'Share' }).click();
    const dialog = page.getByRole('dialog', { name: 'Public link' });
    await expect.poll(() => dialog.getByTestId('share-status').textContent()).toBe('Not published.');
    await dialog.getByRole('button', { name: 'Publish' }).click();
    const input = dialog.getByTestId('share-link');
    await input.waitFor();
    // The once-only notice is a coloured box like the console's other notices, not loose text.
    const once = dialog.getByTestId('share-link-once');
    expect(await once.textContent()).toBe('Copy the link now: its key is shown only this once.');
    type Styles = { getComputedStyle(element: unknown): { backgroundColor: string } };
    const background = await once.evaluate(
      (element) => (globalThis as unknown as Styles).getComputedStyle(element).backgroundColor,
    );
    expect(background).not.toBe('rgba(0, 0, 0, 0)');

    // A new key asks first: Cancel keeps the key and its link, confirming replaces both.
    const status = dialog.getByTestId('share-status');
    const first = [await input.inputValue(), await status.textContent()];
    const rotate = page.getByTestId('share-rotate-dialog');
    await dialog.getByRole('button', { name: 'New key' }).click();
    await rotate.waitFor();
    expect(await rotate.textContent()).toContain('The current link stops working at once.');
    await h.shot('public-dashboards-01-rotate-confirm');
    await rotate.getByRole('button', { name: 'Cancel' }).click();
    await rotate.waitFor({ state: 'hidden' });
    expect([await input.inputValue(), await status.textContent()]).toEqual(first);
    await dialog.getByRole('button', { name: 'New key' }).click();
    await rotate.getByRole('button', { name: 'Make new key' }).click();
    await rotate.waitFor({ state: 'hidden' });
    await expect.poll(() => input.inputValue()).not.toBe(first[0]);
    expect(await status.textContent()).not.toBe(first[1]);
    native.stop();
    expect(native.messages).toEqual([]);

    await dialog.getByLabel('Lock the map zoom').check();
    await dialog.getByLabel('Language of the view').selectOption('de');
    link = await input.inputValue();
    expect(link).toMatch(
      new RegExp(
        `^${h.server.baseUrl}/public/dashboards/${ids.board}\\?zoomlock=true&language=de#key=swd_[\\w-]{43}$`,
      ),
    );
    expect(await dialog.getByTestId('share-status').textContent()).toMatch(
      /^Published with key swd_[\w-]{8}… since /,
    );
    expect(await seriousViolations(page), 'share dialog').toEqual([]);
    await h.shot('public-dashboards-01-share');
    await dialog.getByRole('button', { name: 'Close', exact: true }).click();

    // Someone sharing from a German console offers a German view unless they choose another: a new
    // key (the link is shown only when issued) gives the link the next test opens.
    await page.getByLabel('Language').selectOption('de');
    await page.getByRole('button', { name: 'Teilen' }).click();
    const german = page.getByRole('dialog', { name: 'Öffentlicher Link' });
    await german.getByRole('button', { name: 'Neuer Schlüssel' }).click();
    await rotate.getByRole('button', { name: 'Neuen Schlüssel erzeugen' }).click();
    await rotate.waitFor({ state: 'hidden' });
    await german.getByTestId('share-link').waitFor();
    expect(await german.locator('select').inputValue()).toBe('de');
    await german.getByLabel('Kartenzoom sperren').check();
    link = await german.getByTestId('share-link').inputValue();
    expect(link).toMatch(/\?zoomlock=true&language=de#key=swd_/);
    await german.getByRole('button', { name: 'Schließen', exact: true }).click();
    await page.getByLabel('Sprache').selectOption('en');
  });

  it('opens without login in a fresh context, in German, with the map zoom locked', async () => {
    const page = await anonymousPage(link);
    await page.getByTestId('dashboard-title').waitFor();
    expect(await page.getByTestId('dashboard-title').textContent()).toBe('Control room');
    expect(await page.locator('html').getAttribute('lang')).toBe('de');
    await page.getByText('Nur-Lese-Ansicht').waitFor();
    await expect.poll(() => page.getByTestId('live-status').textContent()).toBe('Live');
    await expect.poll(() => gauge(page)).toBe('4');
    // The line chart's history comes through the dashboard's key too.
    await expect
      .poll(() => page.getByTestId('line-chart-widget').getAttribute('data-points'), { timeout: 15_000 })
      .toBe('1');
    const map = page.getByTestId('twin-map');
    await expect.poll(() => page.getByTestId('twin-marker').count(), { timeout: 20_000 }).toBe(1);
    expect(await map.getAttribute('data-zoom-lock')).toBe('true');
    expect(await page.locator('.maplibregl-ctrl-zoom-in').count()).toBe(0);
    const zoom = await map.getAttribute('data-zoom');
    const box = (await map.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.wheel(0, -600);
    await page.mouse.dblclick(box.x + box.width / 2, box.y + box.height / 2);
    await page.waitForTimeout(800);
    expect(await map.getAttribute('data-zoom')).toBe(zoom);
    // The console's own API was never asked: no session, no login page.
    const paths = requested.get(page)!;
    expect(paths).toContain(`/hub/api/v1/public-dashboards/${ids.board}`);
    expect(paths.filter((p) => p.startsWith('/api/') || p.startsWith('/xapi/'))).toEqual([]);
    expect(await page.context().cookies()).toEqual([]);
    expect(await seriousViolations(page), 'public view').toEqual([]);
    await page.screenshot({
      path: path.join(SCREENSHOT_DIR, 'public-dashboards-02-anonymous-de.png'),
      fullPage: true,
    });
    await page.context().close();
  });

  it('is English with a zoomable map without those parameters', async () => {
    const page = await anonymousPage(link.replace(/\?[^#]*/, ''));
    await page.getByText('Read-only view').waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    const map = page.getByTestId('twin-map');
    await expect.poll(() => map.getAttribute('data-zoom'), { timeout: 20_000 }).not.toBeNull();
    expect(await map.getAttribute('data-zoom-lock')).toBe('false');
    const zoom = await map.getAttribute('data-zoom');
    await page.locator('.maplibregl-ctrl-zoom-in').click();
    await expect.poll(() => map.getAttribute('data-zoom')).not.toBe(zoom);
    expect(await seriousViolations(page), 'public view, English').toEqual([]);
    await page.context().close();
  });

  it('keeps one socket per page and shows the server’s value after every reconnect', async () => {
    const consolePage = h.page;
    await consolePage.addInitScript(RECORD_SOCKETS);
    const consoleSockets = watchSockets(consolePage, '/xapi/v1/live');
    await consolePage.reload();
    let publicSockets: typeof consoleSockets = [];
    const publicPage = await anonymousPage(link.replace(/\?[^#]*/, ''), (page) => {
      publicSockets = watchSockets(page, '/public-dashboards/');
    });
    for (const page of [consolePage, publicPage])
      await expect
        .poll(() => page.getByTestId('live-status').textContent(), { timeout: 15_000 })
        .toBe('Live');
    // One open socket per page, each socket subscribing once. A closed socket's close event may reach
    // the test a little after the page moved on, so the count is awaited.
    const open = (sockets: typeof consoleSockets) => sockets.filter((s) => !s.socket.isClosed()).length;
    await expect.poll(() => [open(consoleSockets), open(publicSockets)]).toEqual([1, 1]);
    expect([...consoleSockets, ...publicSockets].every((s) => s.subscribes === 1)).toBe(true);
    const before = { console: consoleSockets.length, public: publicSockets.length };

    const values = [5.8, 4, 5.8, 4.2, 5.8, 4];
    for (const [round, value] of values.entries()) {
      // Alternate: half the rounds change the value while the sockets are down, half just after.
      await Promise.all([dropSockets(consolePage), dropSockets(publicPage)]);
      if (round % 2 === 0) {
        await device.publish({ pressure: value });
        await expect.poll(serverValue, { timeout: 15_000 }).toBe(value);
      }
      for (const page of [consolePage, publicPage])
        await expect
          .poll(() => page.getByTestId('live-status').textContent(), { timeout: 15_000 })
          .toMatch(/^Live$/);
      if (round % 2 === 1) {
        await device.publish({ pressure: value - 1 });
        await device.publish({ pressure: value });
        await expect.poll(serverValue, { timeout: 15_000 }).toBe(value);
      }
      const shown = String(await serverValue());
      for (const page of [consolePage, publicPage])
        await expect.poll(() => gauge(page), { timeout: 10_000 }).toBe(shown);
      // And it stays: no late read puts an older value back.
      await consolePage.waitForTimeout(1200);
      expect([await gauge(consolePage), await gauge(publicPage)]).toEqual([shown, shown]);
    }
    // One new socket per drop, one open at the end, each subscribing once.
    expect([consoleSockets.length - before.console, publicSockets.length - before.public]).toEqual([
      values.length,
      values.length,
    ]);
    await expect.poll(() => [open(consoleSockets), open(publicSockets)]).toEqual([1, 1]);
    expect([...consoleSockets, ...publicSockets].every((s) => s.subscribes === 1)).toBe(true);
    await publicPage.screenshot({
      path: path.join(SCREENSHOT_DIR, 'public-dashboards-03-after-reconnects.png'),
    });
    openView = publicPage;
  }, 180_000);

  it('refuses the link once the owner unpublishes, also in a view left open', async () => {
    const { page } = h;
    const native = watchNativeDialogs(page);
    const published = async () =>
      (await xapi<{ published: boolean }>('GET', `/xapi/v1/dashboards/${ids.board}/public-key`)).published;
    await page.getByRole('button', { name: 'Share' }).click();
    const dialog = page.getByRole('dialog', { name: 'Public link' });
    const status = dialog.getByTestId('share-status');
    await expect.poll(() => status.textContent()).toMatch(/^Published with key /);

    // Unpublishing asks first: Cancel keeps the dashboard published, confirming unpublishes it.
    const revoke = page.getByTestId('share-revoke-dialog');
    await dialog.getByRole('button', { name: 'Unpublish' }).click();
    await revoke.waitFor();
    expect(await revoke.textContent()).toContain('open views close');
    await revoke.getByRole('button', { name: 'Cancel' }).click();
    await revoke.waitFor({ state: 'hidden' });
    expect(await status.textContent()).toMatch(/^Published with key /);
    expect(await published()).toBe(true);
    await dialog.getByRole('button', { name: 'Unpublish' }).click();
    await revoke.getByRole('button', { name: 'Unpublish' }).click();
    await expect.poll(() => status.textContent()).toBe('Not published.');
    expect(await published()).toBe(false);
    native.stop();
    expect(native.messages).toEqual([]);
    await h.shot('public-dashboards-04-unpublished');
    await openView!.getByTestId('public-refused').waitFor({ timeout: 15_000 });
    await openView!.context().close();

    const fresh = await anonymousPage(link);
    await fresh.getByTestId('public-refused').waitFor();
    expect(await fresh.getByTestId('public-refused').textContent()).toBe(
      'Dieses Dashboard ist nicht veröffentlicht, oder der Link ist nicht mehr gültig.',
    );
    expect(await seriousViolations(fresh), 'refused view').toEqual([]);
    await fresh.screenshot({
      path: path.join(SCREENSHOT_DIR, 'public-dashboards-05-refused.png'),
      fullPage: true,
    });
    await fresh.context().close();
  });
});
