import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe-check.js';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
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

const EMAIL = 'grace@stellwerk.test';
const PASSWORD = 'compiler pioneer 1952';

/**
 * Dashboards in Chromium: a connector, device, twin and a gauge-visualised state are seeded through
 * the XAPI; the console creates a dashboard with a line chart and a gauge bound to that state, moves
 * and resizes with the keyboard, saves, reloads, and shows a value published with `mosquitto_pub`
 * live in both widgets. Nested dashboards navigate; the widget's and the twin form's dashboard pickers
 * offer only dashboards of the same account (and the server refuses another account's). Removing a
 * widget and discarding an edit ask in the console's own dialog, never the browser's.
 */
let h: ConsoleHarness;
let token: string;
let xapi: Xapi;
const ids: Record<string, string> = {};

let device: SeededDevice;

/** axe-core finds no serious or critical violation on the page as it is. */
const expectAccessible = async (where: string) => expect(await seriousViolations(h.page), where).toEqual([]);

const optionTexts = (select: Locator) => select.locator('option').allTextContents();

describe('console dashboards end to end (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    token = await apiToken(h.server.baseUrl, EMAIL, PASSWORD);
    xapi = xapiClient(h.server.baseUrl, token);

    device = await seedMqttDevice(xapi, h.mqttPort, {
      connectorTitle: 'Boiler room gateway',
      driver: { title: 'JSON', parser: { type: 'json' } },
      device: { device_id: 'boiler-1-sensor', title: 'Boiler 1 sensor', referenceId: 'BOILER-1' },
    });
    ids.twin = (
      await xapi('POST', '/xapi/v1/digital-twins', {
        title: 'Boiler 1',
        referenceId: 'BOILER-1',
        latitude: 48.14,
        longitude: 11.58,
      })
    ).id;
    ids.state = await addRoutedState(xapi, ids.twin, {
      key: 'temperature',
      title: 'Flow temperature',
      unit: '°C',
      meta: { visual: { type: 'gauge', yAxis: { min: 0, max: 120, unit: '°C' } } },
    });
    ids.overview = (await xapi('POST', '/xapi/v1/dashboards', { title: 'Plant overview' })).id;
    ids.scratch = (await xapi('POST', '/xapi/v1/dashboards', { title: 'Scratch board' })).id;
    ids.tenant = (await xapi('POST', '/xapi/v1/accounts', { title: 'Tenant B' })).id;
    ids.foreign = (
      await xapi('POST', '/xapi/v1/dashboards', { title: 'Foreign board', accountId: ids.tenant })
    ).id;
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('creates a dashboard with a line chart and a gauge, arranges them by keyboard and saves', async () => {
    const { page } = h;
    await signIn(page, h.server.baseUrl, EMAIL, PASSWORD);

    await page
      .getByRole('navigation', { name: 'Main navigation' })
      .getByRole('link', { name: 'Dashboards' })
      .click();
    const list = page.getByTestId('dashboard-list');
    await list.getByRole('link', { name: 'Plant overview' }).waitFor();
    // Only the chosen account's dashboards are listed: the caller's own first, a sub-account's on request.
    expect(await list.getByRole('link', { name: 'Foreign board' }).count()).toBe(0);
    await h.shot('dashboards-01-list');
    await expectAccessible('list');
    await page.getByLabel('Account').selectOption({ label: 'Stellwerk / Tenant B' });
    await list.getByRole('link', { name: 'Foreign board' }).waitFor();
    expect(await page.getByTestId('dashboard-card').count()).toBe(1);
    await page.getByLabel('Account').selectOption({ label: 'Stellwerk' });
    await list.getByRole('link', { name: 'Plant overview' }).waitFor();

    await page.getByRole('button', { name: 'New dashboard' }).click();
    const form = page.getByRole('dialog', { name: 'Create a dashboard' });
    await form.getByLabel('Title').fill('Boiler room');
    await form.getByLabel('Description').fill('Heating circuit 1');
    await form.getByRole('button', { name: 'New dashboard' }).click();
    await expect.poll(() => page.getByTestId('dashboard-title').textContent()).toBe('Boiler room');
    ids.boiler = page.url().split('/').pop()!;
    await page.getByTestId('dashboard-empty').getByText('No widgets yet — add one.').waitFor();
    await h.shot('dashboards-02-empty');

    // Whether closing or reloading the window would ask first (the console's beforeunload guard).
    const unloadAsks = () =>
      page.evaluate<boolean>(
        `(() => { const event = new Event('beforeunload', { cancelable: true }); window.dispatchEvent(event); return event.defaultPrevented; })()`,
      );
    const addWidget = async (type: string) => {
      await page.getByRole('button', { name: 'Add widget' }).first().click();
      const dialog = page.getByRole('dialog', { name: 'Add a widget' });
      await dialog.getByRole('radio', { name: new RegExp(`^${type}`) }).check();
      await dialog.getByLabel('Twin', { exact: true }).selectOption({ label: 'Boiler 1' });
      // A line chart takes several states (checkboxes), a gauge one (a select).
      if (type === 'Line chart') await dialog.getByRole('checkbox', { name: /^Flow temperature/ }).check();
      else
        await dialog.getByLabel('Data state').selectOption({ label: 'Flow temperature (temperature, °C)' });
      if (type === 'Line chart') {
        // The first widget's settings are only in the dialog: the window asks before they are lost.
        expect(await unloadAsks()).toBe(true);
        await h.shot('dashboards-03-widget-dialog');
        await expectAccessible('widget dialog');
      }
      await dialog.getByRole('button', { name: 'Add widget' }).click();
      await dialog.waitFor({ state: 'hidden' });
    };
    expect(await unloadAsks()).toBe(false);
    await addWidget('Line chart');
    await addWidget('Gauge');
    const widgets = page.getByTestId('widget');
    await expect.poll(() => widgets.count()).toBe(2);
    const gauge = page.locator('[data-widget-type="gauge"]');
    expect(await gauge.getAttribute('data-x')).toBe('6');
    // Beside the editing buttons of a three-column gauge the title wraps instead of being cut off,
    // and carries its whole text as a tooltip.
    const gaugeTitle = gauge.getByRole('heading', { name: 'Boiler 1 · Flow temperature' });
    expect(await gaugeTitle.getAttribute('title')).toBe('Boiler 1 · Flow temperature');
    type Box = { scrollWidth: number; clientWidth: number; scrollHeight: number; clientHeight: number };
    const fits = await gaugeTitle.evaluate((title: Box) => [
      title.scrollWidth - title.clientWidth,
      title.scrollHeight - title.clientHeight,
    ]);
    expect(fits[0], `overflow ${fits.join(', ')}`).toBeLessThanOrEqual(0);
    expect(fits[1], `overflow ${fits.join(', ')}`).toBeLessThanOrEqual(1);

    // Keyboard: the move handle moves with the arrow keys and resizes with Shift.
    const handle = gauge.getByRole('button', { name: /^Move Boiler 1 · Flow temperature/ });
    await handle.focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    expect(await gauge.getAttribute('data-x')).toBe('8');
    await page.keyboard.press('Shift+ArrowRight');
    expect(await gauge.getAttribute('data-w')).toBe('4');
    // Moving onto the chart pushes the chart down; moving back up keeps both apart.
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    const chart = page.locator('[data-widget-type="line-chart"]');
    expect(await gauge.getAttribute('data-x')).toBe('5');
    expect(await chart.getAttribute('data-y')).toBe('4');
    for (let step = 0; step < 3; step++) await gauge.getByRole('button', { name: 'Move right' }).click();
    for (let step = 0; step < 4; step++) await chart.getByRole('button', { name: 'Move up' }).click();
    expect(await chart.getAttribute('data-y')).toBe('0');
    expect(await gauge.getAttribute('data-x')).toBe('8');

    // The mouse drags the handle cell by cell.
    const grip = (await handle.boundingBox())!;
    const grid = (await page.getByTestId('dashboard-grid').boundingBox())!;
    const cell = (grid.width + 16) / 12;
    await page.mouse.move(grip.x + grip.width / 2, grip.y + grip.height / 2);
    await page.mouse.down();
    await page.mouse.move(grip.x + grip.width / 2 - cell * 2, grip.y + grip.height / 2, { steps: 6 });
    await page.mouse.up();
    expect(await gauge.getAttribute('data-x')).toBe('6');
    await handle.focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    expect(await gauge.getAttribute('data-x')).toBe('8');
    await h.shot('dashboards-04-editing');
    await expectAccessible('editing');

    await page.getByRole('button', { name: 'Save layout' }).click();
    await page.getByRole('status').getByText('Dashboard saved.').waitFor();
    const stored = await xapi<{ layout: { version: number; widgets: Record<string, unknown>[] } }>(
      'GET',
      `/xapi/v1/dashboards/${ids.boiler}`,
    );
    expect(stored.layout.version).toBe(1);
    expect(stored.layout.widgets).toEqual([
      expect.objectContaining({
        type: 'line-chart',
        twinId: ids.twin,
        stateIds: [ids.state],
        x: 0,
        y: 0,
        w: 6,
      }),
      expect.objectContaining({ type: 'gauge', twinId: ids.twin, stateIds: [ids.state], x: 8, y: 0, w: 4 }),
    ]);
  });

  it('shows a value published with mosquitto_pub live in the gauge and the line chart after a reload', async () => {
    const { page } = h;
    await page.reload();
    await expect.poll(() => page.getByTestId('widget').count()).toBe(2);
    await expect.poll(() => page.getByTestId('live-status').textContent()).toMatch(/Live/);
    const chart = page.getByTestId('line-chart-widget');
    await chart.getByText('No values in this range yet.').waitFor();
    expect(await page.getByTestId('gauge-value').textContent()).toBe('—');

    await device.publish({ temperature: 73.5 });
    await expect.poll(() => page.getByTestId('gauge-value').textContent(), { timeout: 15_000 }).toBe('73.5');
    await expect.poll(() => chart.getAttribute('data-points')).toBe('1');
    expect(await chart.textContent()).toMatch(/1 point\b/);
    expect(await page.getByTestId('gauge-widget').textContent()).toMatch(/°C/);
    await expect
      .poll(() => page.locator('[data-widget-type="gauge"] canvas').count(), { timeout: 15_000 })
      .toBe(1);
    await expect.poll(() => chart.locator('canvas').count(), { timeout: 15_000 }).toBe(1);
    await device.publish({ temperature: 74 });
    await expect.poll(() => page.getByTestId('gauge-value').textContent(), { timeout: 15_000 }).toBe('74');
    await expect.poll(() => chart.getAttribute('data-points')).toBe('2');
    await h.shot('dashboards-05-live');

    await page.getByTestId('theme-toggle').click();
    await page.waitForTimeout(300);
    await h.shot('dashboards-06-live-dark');
    await page.getByTestId('theme-toggle').click();
  });

  it("adds a value widget from a twin's state: the big number with unit, the state's name and time, live", async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/dashboards/${ids.scratch}`);
    await page.getByTestId('dashboard-empty').waitFor();
    await page.getByRole('button', { name: 'Add widget' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Add a widget' });
    await dialog.getByRole('radio', { name: /^Value/ }).check();
    await dialog.getByLabel('Twin', { exact: true }).selectOption({ label: 'Boiler 1' });
    await dialog.getByLabel('Data state').selectOption({ label: 'Flow temperature (temperature, °C)' });
    await dialog.getByRole('button', { name: 'Add widget' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: 'Save layout' }).click();
    await page.getByRole('status').getByText('Dashboard saved.').waitFor();

    const widget = page.getByTestId('value-widget');
    await expect.poll(() => widget.getByTestId('value-widget-value').textContent()).toBe('74');
    expect(await widget.getByTestId('value-widget-unit').textContent()).toBe('°C');
    expect(await widget.getByTestId('value-widget-name').textContent()).toBe('Flow temperature');
    expect(await widget.getByTestId('value-widget-time').textContent()).toMatch(
      /^\s*Updated\s+\d+ \w+ \d{4}, \d\d:\d\d:\d\d/,
    );
    await expect.poll(() => page.getByTestId('live-status').textContent()).toMatch(/Live/);
    await device.publish({ temperature: 75.5 });
    await expect
      .poll(() => widget.getByTestId('value-widget-value').textContent(), { timeout: 15_000 })
      .toBe('75.5');
    await h.shot('dashboards-13-value-widget');
    await expectAccessible('value widget');
    const stored = await xapi<{ layout: { widgets: Record<string, unknown>[] } }>(
      'GET',
      `/xapi/v1/dashboards/${ids.scratch}`,
    );
    expect(stored.layout.widgets).toEqual([
      expect.objectContaining({ type: 'value', twinId: ids.twin, stateIds: [ids.state] }),
    ]);
    // Back to the value and the dashboard the later checks expect.
    await device.publish({ temperature: 74 });
    await expect
      .poll(() => widget.getByTestId('value-widget-value').textContent(), { timeout: 15_000 })
      .toBe('74');
    await page.goto(`${h.server.baseUrl}/#/dashboards/${ids.boiler}`);
    await expect.poll(() => page.getByTestId('widget').count()).toBe(2);
  });

  it('adds a nested dashboard from the same account only and navigates to it', async () => {
    const { page } = h;
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Add widget' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a widget' });
    await dialog.getByRole('radio', { name: /^Nested dashboard/ }).check();
    const picker = dialog.getByLabel('Dashboard to open');
    // Neither this dashboard nor another account's.
    expect(await optionTexts(picker)).toEqual(['Choose a dashboard…', 'Plant overview', 'Scratch board']);
    await picker.selectOption({ label: 'Plant overview' });
    await dialog.getByRole('button', { name: 'Add widget' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: 'Save layout' }).click();
    await page.getByRole('status').getByText('Dashboard saved.').waitFor();

    await page.getByTestId('nested-dashboard-widget').click();
    await expect.poll(() => page.getByTestId('dashboard-title').textContent()).toBe('Plant overview');
    expect(page.url()).toContain(`#/dashboards/${ids.overview}`);
    await page.getByTestId('dashboard-empty').waitFor();
    await page.goBack();
    await expect.poll(() => page.getByTestId('dashboard-title').textContent()).toBe('Boiler room');
    await expect.poll(() => page.getByTestId('widget').count()).toBe(3);
  });

  it("offers only the twin's account's dashboards in the twin form, links the twin to it, and the server refuses another account's", async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/twins/${ids.twin}`);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit', exact: true });
    const picker = dialog.getByLabel('Dashboard', { exact: true });
    await expect
      .poll(() => optionTexts(picker))
      .toEqual(['No dashboard', 'Boiler room', 'Plant overview', 'Scratch board']);
    await picker.selectOption({ label: 'Boiler room' });
    await dialog.getByRole('button', { name: 'Save', exact: true }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByTestId('twin-dashboard-link').click();
    await expect.poll(() => page.getByTestId('dashboard-title').textContent()).toBe('Boiler room');

    const refused = await fetch(`${h.server.baseUrl}/xapi/v1/digital-twins/${ids.twin}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ dashboardId: ids.foreign }),
    });
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('CONFIG_NOT_ASSIGNED');
  });

  it('shows every other widget type from a layout written through the API', async () => {
    const { page } = h;
    ids.pump = (
      await xapi('POST', `/xapi/v1/digital-twins/${ids.twin}/states`, {
        key: 'pump-on',
        title: 'Pump',
        source: { type: 'boolean', initial: false },
        meta: { visual: { type: 'boolean' } },
      })
    ).id;
    const widgets = [
      { id: 'b', type: 'boolean', title: '', x: 0, y: 0, w: 3, h: 2, twinId: ids.twin, stateIds: [ids.pump] },
      { id: 't', type: 'twin-button', title: '', x: 3, y: 0, w: 3, h: 2, twinId: ids.twin },
      { id: 'n', type: 'dashboard', title: '', x: 6, y: 0, w: 3, h: 2, dashboardId: ids.boiler },
      {
        id: 'r',
        type: 'raw-values',
        title: 'All values',
        x: 0,
        y: 2,
        w: 4,
        h: 4,
        twinId: ids.twin,
        stateIds: [ids.state, ids.pump],
      },
      {
        id: 'd',
        type: 'donut',
        title: '',
        x: 4,
        y: 2,
        w: 3,
        h: 4,
        twinId: ids.twin,
        stateIds: [ids.state],
        max: 100,
      },
      { id: 'm', type: 'map', title: 'Sites', x: 7, y: 2, w: 5, h: 4 },
    ];
    ids.all = (
      await xapi('POST', '/xapi/v1/dashboards', { title: 'All widgets', layout: { version: 1, widgets } })
    ).id;
    await page.goto(`${h.server.baseUrl}/#/dashboards/${ids.all}`);
    await expect.poll(() => page.getByTestId('widget').count()).toBe(6);
    await expect.poll(() => page.getByTestId('live-status').textContent()).toMatch(/Live/);
    const lamp = page.getByTestId('boolean-widget');
    expect(await lamp.textContent()).toMatch(/Off/);
    await xapi('PUT', `/xapi/v1/states/${ids.pump}`, { value: true });
    await expect.poll(() => lamp.getAttribute('data-on'), { timeout: 15_000 }).toBe('true');
    expect(await lamp.textContent()).toMatch(/On/);
    expect(await page.getByTestId('raw-value-temperature').textContent()).toBe('74');
    await expect.poll(() => page.getByTestId('raw-value-pump-on').textContent()).toBe('true');
    expect(await page.getByTestId('donut-value').textContent()).toBe('74');
    expect(await page.getByTestId('twin-button-widget').getAttribute('href')).toBe(`#/twins/${ids.twin}`);
    expect(await page.getByTestId('nested-dashboard-widget').textContent()).toMatch(/Boiler room/);
    await page.getByTestId('map-widget').getByTestId('twin-marker').waitFor();
    await page.locator('[data-testid="map-widget"] canvas.maplibregl-canvas').waitFor();
    await page.waitForTimeout(500);
    await h.shot('dashboards-09-all-widgets');
    await expectAccessible('all widgets');
    await page.getByTestId('theme-toggle').click();
    await page.waitForTimeout(800);
    await h.shot('dashboards-10-all-widgets-dark');
    await expectAccessible('all widgets, dark');
    await page.getByTestId('theme-toggle').click();
    // A narrow grid is one column in reading order.
    await page.setViewportSize({ width: 800, height: 900 });
    await page.waitForTimeout(300);
    const grid = (await page.getByTestId('dashboard-grid').boundingBox())!;
    const map = (await page.locator('[data-widget-type="map"]').boundingBox())!;
    expect(Math.abs(map.width - grid.width)).toBeLessThan(2);
    await h.shot('dashboards-11-narrow');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByTestId('twin-button-widget').click();
    await expect.poll(() => page.getByTestId('twin-title').textContent()).toBe('Boiler 1');
  });

  it('asks in its own dialog before removing a widget or discarding an edit; Cancel keeps both', async () => {
    const { page } = h;
    const native = watchNativeDialogs(page);
    await page.goto(`${h.server.baseUrl}/#/dashboards/${ids.all}`);
    const widgets = page.getByTestId('widget');
    const map = page.locator('[data-widget-type="map"]');
    await expect.poll(() => widgets.count()).toBe(6);
    const edit = page.getByRole('button', { name: 'Edit', exact: true });
    const discard = page.getByRole('button', { name: 'Discard changes' });
    const discardDialog = page.getByTestId('dashboard-discard-dialog');

    // Without an edit, leaving the editor asks nothing.
    await edit.click();
    await discard.click();
    await edit.waitFor();
    expect(await discardDialog.isVisible()).toBe(false);

    await edit.click();
    const removeDialog = page.getByTestId('widget-remove-dialog');
    await page.getByRole('button', { name: 'Remove widget: Sites' }).click();
    await removeDialog.waitFor();
    expect(await removeDialog.textContent()).toContain('Remove the widget “Sites”?');
    await h.shot('dashboards-12-remove-widget-confirm');
    await removeDialog.getByRole('button', { name: 'Cancel' }).click();
    await removeDialog.waitFor({ state: 'hidden' });
    expect([await widgets.count(), await map.count()]).toEqual([6, 1]);
    await page.getByRole('button', { name: 'Remove widget: Sites' }).click();
    await removeDialog.getByRole('button', { name: 'Remove', exact: true }).click();
    await removeDialog.waitFor({ state: 'hidden' });
    await expect.poll(() => widgets.count()).toBe(5);
    expect(await map.count()).toBe(0);

    // With the widget removed, discarding asks: Cancel keeps editing the draft, confirming restores the saved layout.
    await discard.click();
    await discardDialog.waitFor();
    expect(await discardDialog.textContent()).toContain('Discard the unsaved changes to this dashboard?');
    await discardDialog.getByRole('button', { name: 'Cancel' }).click();
    await discardDialog.waitFor({ state: 'hidden' });
    expect(await page.getByText('Editing', { exact: true }).isVisible()).toBe(true);
    expect(await widgets.count()).toBe(5);
    await discard.click();
    await discardDialog.getByRole('button', { name: 'Discard', exact: true }).click();
    await discardDialog.waitFor({ state: 'hidden' });
    await edit.waitFor();
    await expect.poll(() => widgets.count()).toBe(6);
    expect(await map.count()).toBe(1);
    const stored = await xapi<{ layout: { widgets: unknown[] } }>('GET', `/xapi/v1/dashboards/${ids.all}`);
    expect(stored.layout.widgets).toHaveLength(6);
    native.stop();
    expect(native.messages).toEqual([]);
  });

  it('searches, renames and deletes dashboards with a confirmation, in German too', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/dashboards`);
    const cards = page.getByTestId('dashboard-card');
    await expect.poll(() => cards.count()).toBe(4);
    await page.getByLabel('Search', { exact: true }).fill('boiler');
    await expect.poll(() => cards.count()).toBe(1);
    expect(await cards.textContent()).toMatch(/Boiler room.*3 widgets/s);
    await page.getByLabel('Search', { exact: true }).fill('');
    await expect.poll(() => cards.count()).toBe(4);

    await page.getByRole('button', { name: 'Rename Plant overview' }).click();
    const form = page.getByRole('dialog', { name: 'Rename dashboard' });
    await form.getByLabel('Title').fill('Plant north overview');
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('link', { name: /Plant north overview/ }).waitFor();

    await page.getByRole('button', { name: 'Delete Scratch board' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete dashboard' });
    expect(await confirm.textContent()).toContain('Scratch board');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect(await cards.count()).toBe(4);
    await page.getByRole('button', { name: 'Delete Scratch board' }).click();
    await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect.poll(() => cards.count()).toBe(3);
    await h.shot('dashboards-07-list-after');

    await page.getByLabel('Language').selectOption('de');
    await page.getByRole('heading', { name: 'Dashboards' }).waitFor();
    await page.getByRole('button', { name: 'Neues Dashboard' }).waitFor();
    await page.goto(`${h.server.baseUrl}/#/dashboards/${ids.boiler}`);
    await page.getByRole('button', { name: 'Bearbeiten' }).click();
    await page.getByText('Layout speichern').waitFor();
    await h.shot('dashboards-08-german-editing');
    await page.getByLabel('Sprache').selectOption('en');

    expect(h.foreignRequests, 'no request leaves loopback').toEqual([]);
  });
});
