import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe-check.js';
import { SCREENSHOT_DIR, startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { pictureStats } from './support/screenshot-check.js';
import { apiToken, createMqttConnector, signIn, xapiClient, type Xapi } from './support/seed.js';

const ADMIN = { email: 'ada@stellwerk.test', password: 'analytical engine 1843' };
const OPERATOR = { email: 'plant-operator@stellwerk.test', password: 'plant operator password' };

/**
 * The console's frame in Chromium: an administrator edits an account's meta info and copies a
 * device's external id; a user of a sub-account whose role allows only dashboards sees only those
 * in the navigation, gets the no-permission page for a device address, takes over the parent
 * account's dark teal theme with system fonts, and is asked before leaving an edited dashboard.
 */
let h: ConsoleHarness;
let xapi: Xapi;
const ids: Record<string, string> = {};

const expectAccessible = async (where: string) => expect(await seriousViolations(h.page), where).toEqual([]);

/** A full-page screenshot that must be a picture, not a blank page. */
async function shot(name: string): Promise<void> {
  await h.shot(name);
  const stats = pictureStats(await fs.readFile(path.join(SCREENSHOT_DIR, `${name}.png`)));
  expect(stats.distinctColours, name).toBeGreaterThan(20);
}

const navLinks = async () =>
  (await h.page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link').allTextContents()).map(
    (text) => text.trim(),
  );

async function logOut(): Promise<void> {
  await h.page.getByRole('button', { name: 'Log out' }).click();
  await h.page.getByLabel('E-mail').waitFor();
}

describe('console navigation, unsaved changes, account theme and settings (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({
      STELLWERK_ADMIN_EMAIL: ADMIN.email,
      STELLWERK_ADMIN_PASSWORD: ADMIN.password,
    });
    await h.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.server.baseUrl });
    xapi = xapiClient(h.server.baseUrl, await apiToken(h.server.baseUrl, ADMIN.email, ADMIN.password));

    ids.utility = (
      await xapi('POST', '/xapi/v1/accounts', {
        title: 'Utility',
        uiSettings: { systemUiTheme: 'dark', colorTheme: 'teal', systemFonts: true },
      })
    ).id;
    ids.plant = (await xapi('POST', '/xapi/v1/accounts', { title: 'Plant', parentId: ids.utility })).id;
    const role = await xapi('POST', '/xapi/v1/roles', {
      name: 'Dashboard editor',
      permissions: ['dashboard.manage'],
      accountId: ids.plant,
    });
    await xapi('POST', '/xapi/v1/users', {
      email: OPERATOR.email,
      name: 'Plant operator',
      password: OPERATOR.password,
      roleIds: [role.id],
      accountId: ids.plant,
    });
    ids.night = (
      await xapi('POST', '/xapi/v1/dashboards', { title: 'Night shift', accountId: ids.plant })
    ).id;
    ids.board = (
      await xapi('POST', '/xapi/v1/dashboards', {
        title: 'Plant board',
        accountId: ids.plant,
        layout: {
          version: 1,
          widgets: [
            { id: 'w1', type: 'dashboard', title: 'Night', x: 0, y: 0, w: 3, h: 2, dashboardId: ids.night },
          ],
        },
      })
    ).id;

    const connector = await createMqttConnector(xapi, 'Pump house');
    ids.device = (
      await xapi('POST', '/xapi/v1/virtual-devices', {
        device_id: 'pump-1',
        title: 'Pump 1',
        externalId: 'ERP-4711',
        connectorId: connector.id,
      })
    ).id;
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('edits and shows the meta info of an account, and copies a device’s external id', async () => {
    const { page } = h;
    await signIn(page, h.server.baseUrl, ADMIN.email, ADMIN.password);
    expect(await navLinks()).toContain('Devices');

    await page.goto(`${h.server.baseUrl}/#/accounts/${ids.plant}`);
    const meta = page.getByTestId('account-meta');
    await meta.getByRole('button', { name: 'Add an entry' }).click();
    await meta.getByLabel('Key').fill('site');
    await meta.getByLabel('Value').fill('Pumpwerk Nord');
    await meta.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => meta.getByRole('status').textContent()).toBe('Saved.');
    const stored = await xapi<{ metaInfo: Record<string, unknown> }>('GET', `/xapi/v1/accounts/${ids.plant}`);
    expect(stored.metaInfo).toEqual({ site: 'Pumpwerk Nord' });
    await page.reload();
    await expect
      .poll(() => page.getByTestId('account-meta').getByLabel('Value').inputValue())
      .toBe('Pumpwerk Nord');
    // The sub-account leaves its theme to the parent, and the form says what it takes over.
    await expect
      .poll(() => page.getByLabel('Colour theme').locator('option:checked').textContent())
      .toBe('As the parent account (Teal)');
    await shot('console-settings-meta-info');
    await expectAccessible('account settings');

    await page.goto(`${h.server.baseUrl}/#/devices/${ids.device}`);
    await expect.poll(() => page.getByTestId('device-external-id').textContent()).toBe('ERP-4711');
    await page.getByTestId('device-external-id').locator('..').getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.evaluate<string>('navigator.clipboard.readText()')).toBe('ERP-4711');
    await logOut();
  });

  it('shows a restricted user only the pages their role allows, in the parent account’s theme', async () => {
    const { page } = h;
    await signIn(page, h.server.baseUrl, OPERATOR.email, OPERATOR.password);
    expect(await navLinks()).toEqual(['Overview', 'Security', 'Dashboards']);

    const root = page.locator('html');
    await expect.poll(() => root.getAttribute('data-theme')).toBe('dark');
    await expect.poll(() => root.getAttribute('data-color-theme')).toBe('teal');
    await expect.poll(() => root.getAttribute('data-fonts')).toBe('system');
    const font = await page.evaluate<string>('getComputedStyle(document.body).fontFamily');
    expect(font.startsWith('system-ui')).toBe(true);
    // Runs in the page; the test's own TypeScript has no DOM types, hence the expression text.
    const accent = await page.evaluate<string>(
      "getComputedStyle(document.documentElement).getPropertyValue('--accent').trim()",
    );
    expect(accent).toBe('#2dd4bf');

    await page.goto(`${h.server.baseUrl}/#/devices/${ids.device}`);
    const refused = page.getByTestId('no-permission');
    await expect.poll(() => refused.getByRole('heading').textContent()).toBe('No permission');
    expect(await refused.textContent()).toContain('VirtualDevice.read');
    await shot('console-no-permission');
    await expectAccessible('no-permission page');
  });

  it('asks before leaving an edited dashboard: dismissing keeps the edit, accepting leaves', async () => {
    const { page } = h;
    const boardUrl = `${h.server.baseUrl}/#/dashboards/${ids.board}`;
    await page.goto(boardUrl);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Move down' }).first().click();

    const questions: string[] = [];
    page.once('dialog', (dialog) => {
      questions.push(dialog.message());
      void dialog.dismiss();
    });
    await page
      .getByRole('navigation', { name: 'Main navigation' })
      .getByRole('link', { name: 'Overview' })
      .click();
    await expect
      .poll(() => questions)
      .toEqual(['You have unsaved changes. Leave this page and discard them?']);
    expect(page.url()).toBe(boardUrl);
    await expect.poll(() => page.getByText('Editing', { exact: true }).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Save layout' }).isVisible()).toBe(true);
    await shot('console-unsaved-dashboard-kept');
    await expectAccessible('dashboard editor in the dark teal theme');

    page.once('dialog', (dialog) => {
      questions.push(dialog.message());
      void dialog.accept();
    });
    await page
      .getByRole('navigation', { name: 'Main navigation' })
      .getByRole('link', { name: 'Overview' })
      .click();
    await page.getByTestId('greeting').waitFor();
    expect(questions).toHaveLength(2);
    expect(page.url()).toBe(`${h.server.baseUrl}/#/`);

    // Nothing was saved: the board opens with its widget where it was.
    const board = await xapi<{ layout: { widgets: { y: number }[] } }>(
      'GET',
      `/xapi/v1/dashboards/${ids.board}`,
    );
    expect(board.layout.widgets[0]?.y).toBe(0);
    expect(h.foreignRequests).toEqual([]);
  });
});
