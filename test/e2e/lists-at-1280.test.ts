import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvObjects } from '../integration/support/csv-text.js';
import { seriousViolations } from './support/axe-check.js';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { loginXapi, signIn, type Xapi } from './support/seed.js';

const EMAIL = 'lists@stellwerk.test';
const PASSWORD = 'tables fit the screen 1280';

/**
 * Every list page at 1280 × 800 in Chromium: no page scrolls sideways and every row action button is
 * inside the viewport and inside its table's visible area (long titles seeded on purpose). The devices
 * list is downloaded as CSV and read back: all rows, in the list's order, a formula cell escaped.
 */

const LIST_PAGES = [
  '/devices',
  '/connectors',
  '/gateways',
  '/drivers',
  '/templates',
  '/twins',
  '/accounts',
  '/access',
  '/access/roles',
  '/access/api-keys',
  '/dashboards',
  '/alarms',
  '/alarms/groups',
  '/alarms/reports',
  '/rules',
  '/flows',
  '/flows/filters',
  '/flows/transformers',
];
const LONG = 'Pumping station Obere Talsperre north-east pressure line';

/**
 * Runs in the page (a string: the test's TypeScript has no DOM types): what is wider than the
 * viewport, and each row action button that ends past the viewport or its table's visible area.
 */
const OVERFLOWS = `(() => {
  const out = [];
  const width = window.innerWidth;
  const pageWidth = document.documentElement.scrollWidth;
  if (pageWidth > width) out.push('page is ' + pageWidth + ' px wide');
  for (const button of document.querySelectorAll('main table tbody button, main table tbody a.button')) {
    const box = button.getBoundingClientRect();
    const wrap = button.closest('.dev-table-wrap, [class*="table-wrap"]');
    const right = Math.min(width, wrap ? wrap.getBoundingClientRect().right : width);
    if (box.right > right + 1) out.push('"' + button.textContent.trim() + '" ends at ' + Math.round(box.right) + ' px');
  }
  return out;
})()`;

let h: ConsoleHarness;
let xapi: Xapi;

describe('lists at 1280 px (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    const connector = await xapi('POST', '/xapi/v1/connectors', {
      title: `${LONG} connector`,
      type: 'webhook-in',
    });
    for (const [index, title] of [`${LONG} meter`, '=SUM(A1:A9) meter', 'Cellar meter'].entries())
      await xapi('POST', '/xapi/v1/virtual-devices', {
        device_id: `meter-${index}`,
        title,
        connectorId: connector.id,
      });
    const twin = await xapi('POST', '/xapi/v1/digital-twins', { title: `${LONG} twin` });
    await xapi('POST', '/xapi/v1/gateways', { eui: '58A0CBFFFE800001', title: `${LONG} gateway` });
    await xapi('POST', '/xapi/v1/dashboards', { title: `${LONG} dashboard` });
    await xapi('POST', '/xapi/v1/rules', {
      title: `${LONG} rule`,
      twinId: twin.id,
      trigger: { type: 'event', conditions: [{ stateKey: 'p', operator: '>', value: 5 }] },
      commands: [{ type: 'alarm', message: 'high' }],
    });
    await xapi('POST', '/xapi/v1/device-drivers', { title: `${LONG} driver`, parser: { type: 'json' } });
    await xapi('POST', '/xapi/v1/users', {
      email: 'operator@stellwerk.test',
      name: `${LONG} operator`,
      suppressInvitation: true,
    });
    await h.page.emulateMedia({ reducedMotion: 'reduce' });
    await signIn(h.page, h.server.baseUrl, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('shows every list page without sideways scrolling and with every row action on screen', async () => {
    const { page } = h;
    expect(page.viewportSize()).toEqual({ width: 1280, height: 800 });
    const problems: string[] = [];
    for (const path of LIST_PAGES) {
      await page.goto(`${h.server.baseUrl}/#${path}`);
      await page.locator('main h1').first().waitFor();
      // The list has answered once the loading note is gone.
      await page.waitForSelector('[aria-busy="true"], .list-toolbar-loading', { state: 'detached' });
      const found = await page.evaluate<string[]>(OVERFLOWS);
      for (const problem of found) problems.push(`${path}: ${problem}`);
      await h.shot(`lists-1280${path.replace(/\//g, '-')}`);
    }
    expect(problems).toEqual([]);
  }, 180_000);

  it('downloads the devices list as CSV with every matching row in the list order, formula cells escaped', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/devices`);
    await page.getByTestId('device-row').first().waitFor();
    // The default sort is by title ascending: one click sorts descending.
    await page.getByRole('button', { name: 'Title', exact: true }).click();
    await page.waitForSelector('th[aria-sort="descending"]');
    await page.waitForSelector('[aria-busy="true"]', { state: 'detached' });
    const shown = await page.getByTestId('device-row').locator('td:nth-child(2)').allTextContents();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('download-csv').click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^virtual-devices-\d{4}-\d\d-\d\d\.csv$/);
    const rows = csvObjects(await fs.readFile(await download.path(), 'utf8'));
    expect(rows.map((row) => row.title)).toEqual(
      shown.map((text) => (text.startsWith('=') ? `'${text}` : text)),
    );
    expect(rows.map((row) => row.title)).toContain("'=SUM(A1:A9) meter");
    expect(rows.map((row) => row.device_id).sort()).toEqual(['meter-0', 'meter-1', 'meter-2']);
    await h.shot('lists-1280-devices-csv');
  }, 60_000);

  it('finds no serious accessibility violations on the lists with the shared table', async () => {
    const { page } = h;
    const found: string[] = [];
    for (const path of ['/devices', '/connectors']) {
      await page.goto(`${h.server.baseUrl}/#${path}`);
      await page.locator('main table tbody tr').first().waitFor();
      for (const violation of await seriousViolations(page)) found.push(`${path}: ${violation}`);
    }
    expect(found).toEqual([]);
  }, 60_000);
});
