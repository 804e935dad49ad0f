import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOT_DIR, startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import {
  addRoutedState,
  loginXapi,
  seedMqttDevice,
  signIn,
  type SeededDevice,
  type Xapi,
} from './support/seed.js';

const EMAIL = 'hedy@stellwerk.test';
const PASSWORD = 'frequency hopping 1942';

/**
 * The digital twins area in Chromium: a connector, a device and a twin sharing a referenceId are
 * seeded through the XAPI; `mosquitto_pub` publishes a value that reaches the twin's state by
 * dynamic routing, shows live on the twin page and as a point in its chart; the states editor shows
 * the server's errors; the map draws the twin's marker over the bundled basemap, all on loopback.
 */
let h: ConsoleHarness;
let xapi: Xapi;
const ids: Record<string, string> = {};

let device: SeededDevice;

describe('console digital twins end to end (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);

    device = await seedMqttDevice(xapi, h.mqttPort, {
      connectorTitle: 'Pump house gateway',
      driver: { title: 'Flow meter (JSON)', parser: { type: 'json' } },
      device: { device_id: 'pump-1-meter', title: 'Pump 1 meter', referenceId: 'PUMP-1' },
    });
    ids.site = (await xapi('POST', '/xapi/v1/digital-twins', { title: 'Plant North', tags: ['site'] })).id;
    ids.twin = (
      await xapi('POST', '/xapi/v1/digital-twins', {
        title: 'Pump 1',
        description: 'Inflow pump of basin A',
        parentId: ids.site,
        referenceId: 'PUMP-1',
        tags: ['pump'],
        latitude: 52.52,
        longitude: 13.405,
        customProperties: { floor: '2' },
      })
    ).id;
    ids.flow = await addRoutedState(xapi, ids.twin, {
      key: 'flow',
      title: 'Inflow',
      unit: 'm³/h',
      meta: { visual: { type: 'line-chart', yAxis: { min: 0, max: 100, unit: 'm³/h' } } },
    });
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('shows the tree, searches and filters by tag, and creates a twin with custom properties', async () => {
    const { page } = h;
    await signIn(page, h.server.baseUrl, EMAIL, PASSWORD);

    await page
      .getByRole('navigation', { name: 'Main navigation' })
      .getByRole('link', { name: 'Digital twins' })
      .click();
    const tree = page.getByTestId('twin-tree');
    // The root starts open, so its child shows at once.
    await tree.getByRole('link', { name: 'Pump 1' }).waitFor();
    expect(await tree.getByRole('link', { name: 'Plant North' }).count()).toBe(1);
    await h.shot('twins-01-tree');
    await page.getByRole('button', { name: 'Collapse Plant North' }).click();
    expect(await tree.getByRole('link', { name: 'Pump 1' }).count()).toBe(0);

    await page.getByLabel('Search by title').fill('pump');
    const results = page.getByTestId('twin-results');
    await results.getByRole('link', { name: 'Pump 1' }).waitFor();
    expect(await results.getByRole('link').count()).toBe(1);
    // The result names its place in the tree.
    expect(await results.textContent()).toContain('Plant North');
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByRole('button', { name: 'site', exact: true }).click();
    await expect.poll(() => results.getByRole('link').allTextContents()).toEqual(['Plant North']);
    await page.getByRole('button', { name: 'Clear filters' }).click();

    await page.getByRole('button', { name: 'New twin' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create a digital twin' });
    await dialog.getByLabel('Title').fill('Pump 2');
    await dialog.getByLabel('Parent twin').selectOption({ label: 'Plant North' });
    await dialog.getByLabel('Reference ID').fill('PUMP-2');
    await dialog.getByLabel('Tags').fill('pump, spare');
    await dialog.getByRole('button', { name: 'Add property' }).click();
    await dialog.getByLabel('Key 1').fill('floor');
    await dialog.getByLabel('Value 1').fill('3');
    await h.shot('twins-02-create');
    // The submit says what it does; the opener's label is not repeated in the dialog.
    expect(await dialog.getByRole('button', { name: 'New twin' }).count()).toBe(0);
    await dialog.getByRole('button', { name: 'Create twin' }).click();

    await expect.poll(() => page.getByTestId('twin-title').textContent()).toBe('Pump 2');
    const created = await xapi<{ parentId: string; tags: string[]; customProperties: unknown }>(
      'GET',
      `/xapi/v1/digital-twins/${page.url().split('/').pop()}`,
    );
    expect(created).toMatchObject({
      parentId: ids.site,
      tags: ['pump', 'spare'],
      customProperties: { floor: '3' },
    });
    expect(await page.getByRole('navigation', { name: 'Hierarchy' }).textContent()).toMatch(
      /Plant North.*Pump 2/,
    );
  });

  it('shows a value published with mosquitto_pub live on the twin page and as a point in the chart', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/twins/${ids.twin}`);
    await expect.poll(() => page.getByTestId('live-status').textContent()).toMatch(/Live/);
    expect(await page.getByTestId('twin-id').textContent()).toBe(ids.twin);
    expect(await page.getByTestId('twin-properties').textContent()).toMatch(/floor\s*2/);
    const chart = page.getByTestId('state-chart');
    await chart.getByTestId('chart-empty').waitFor();

    await device.publish({ flow: 42.5 });
    await expect
      .poll(() => page.getByTestId('state-value-flow').textContent(), { timeout: 15_000 })
      .toMatch('42.5');
    // The live value is appended to the open chart …
    await expect.poll(() => chart.textContent()).toMatch(/1 point\b/);
    await expect.poll(() => chart.locator('canvas').count(), { timeout: 15_000 }).toBe(1);
    await h.shot('twins-03-live-value');

    // … and is a stored point: a fresh page reads it back through the time-series query.
    await page.reload();
    await expect
      .poll(() => page.getByTestId('state-chart').textContent(), { timeout: 15_000 })
      .toMatch(/1 point\b/);
    expect(await page.getByTestId('state-value-flow').textContent()).toMatch('42.5');
    await h.shot('twins-04-chart');
  });

  it('edits states and shows the error bodies (duplicate key, y-axis bounds)', async () => {
    const { page } = h;
    await page.getByRole('button', { name: 'Add state' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a data state' });
    await dialog.getByLabel('Key', { exact: true }).fill('flow');
    await dialog.getByRole('button', { name: 'Add state' }).click();
    // A plain mistake reads as the console's sentence alone: no heading, server text or code shown.
    await expect
      .poll(async () => (await dialog.getByTestId('error').innerText()).trim())
      .toBe('The digital twin has a data state with this key already.');
    expect(await dialog.getByTestId('error').getAttribute('data-code')).toBe('DUPLICATE_STATE_KEY');

    await dialog.getByLabel('Key', { exact: true }).fill('noise');
    await dialog.locator('#state-source-type').selectOption('random');
    await dialog.locator('#state-source-min').fill('0');
    await dialog.locator('#state-source-max').fill('10');
    await dialog.getByLabel('Interval (seconds)').fill('60');
    await dialog.locator('#state-visual').selectOption('line-chart');
    await dialog.locator('#state-y-min').fill('50');
    await dialog.locator('#state-y-max').fill('0');
    await dialog.getByRole('button', { name: 'Add state' }).click();
    await expect.poll(() => dialog.getByTestId('error').getAttribute('data-code')).toBe('VALIDATION_ERROR');
    expect(await dialog.locator('#state-y-min').getAttribute('aria-invalid')).toBe('true');
    await h.shot('twins-05-state-error');

    // A bound beyond double range goes as text and fails the schema: said in words at its own field,
    // not at the visual type above it.
    await dialog.locator('#state-y-min').fill('0');
    await dialog.locator('#state-y-max').fill('1e999');
    await dialog.getByRole('button', { name: 'Add state' }).click();
    await expect
      .poll(() => dialog.locator('#state-y-max-hint').textContent())
      .toBe('must be a number or empty');
    expect(await dialog.locator('#state-visual').getAttribute('aria-invalid')).toBeNull();
    expect(await dialog.getByTestId('error-message').textContent()).toBe('Max: must be a number or empty');

    await dialog.locator('#state-y-min').fill('0');
    await dialog.locator('#state-y-max').fill('10');
    await dialog.getByRole('button', { name: 'Add state' }).click();
    await page.getByTestId('state-row-noise').waitFor();
    const noise = (
      await xapi<{ data: { key: string; source: unknown; meta: unknown }[] }>(
        'GET',
        `/xapi/v1/digital-twins/${ids.twin}/states`,
      )
    ).data.find((state) => state.key === 'noise');
    expect(noise).toMatchObject({
      source: { type: 'random', min: 0, max: 10, intervalSeconds: 60 },
      meta: { visual: { type: 'line-chart', yAxis: { min: 0, max: 10, unit: null } } },
    });
  });

  it('deletes a state and a twin after asking in the console’s own dialog, never the browser’s', async () => {
    const { page } = h;
    const nativeDialogs: string[] = [];
    const onDialog = (dialog: { message: () => string; dismiss: () => Promise<void> }) => {
      nativeDialogs.push(dialog.message());
      void dialog.dismiss();
    };
    page.on('dialog', onDialog);
    try {
      await page.getByRole('button', { name: 'Delete state noise' }).click();
      const confirmState = page.getByRole('dialog', { name: 'Delete the state “noise”?' });
      expect(await confirmState.textContent()).toContain('no longer get its values');
      await confirmState.getByRole('button', { name: 'Delete' }).click();
      await page.getByTestId('state-row-noise').waitFor({ state: 'detached' });
      const keys = (
        await xapi<{ data: { key: string }[] }>('GET', `/xapi/v1/digital-twins/${ids.twin}/states`)
      ).data.map((state) => state.key);
      expect(keys).not.toContain('noise');

      const spare = (
        await xapi('POST', '/xapi/v1/digital-twins', { title: 'Spare pump', parentId: ids.site })
      ).id;
      await page.goto(`${h.server.baseUrl}/#/twins/${spare}`);
      await page.getByRole('heading', { name: 'Spare pump', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      const confirmTwin = page.getByRole('dialog', { name: 'Delete “Spare pump”?' });
      // Cancel keeps it.
      await confirmTwin.getByRole('button', { name: 'Cancel' }).click();
      await confirmTwin.waitFor({ state: 'detached' });
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await confirmTwin.getByRole('button', { name: 'Delete' }).click();
      await expect.poll(() => page.url()).toMatch(/#\/twins$/);
      await expect(xapi('GET', `/xapi/v1/digital-twins/${spare}`)).rejects.toThrow(/→ 404/);
    } finally {
      page.off('dialog', onDialog);
    }
    expect(nativeDialogs).toEqual([]);
    await page.goto(`${h.server.baseUrl}/#/twins/${ids.twin}`);
  });

  it('shows the twin as a marker over the offline basemap, filtered by tags, with no request leaving loopback', async () => {
    const { page } = h;
    await page
      .getByRole('navigation', { name: 'Main navigation' })
      .getByRole('link', { name: 'Map' })
      .click();
    const marker = page.getByTestId('twin-marker');
    await marker.waitFor();
    expect(await marker.getAttribute('data-twin-id')).toBe(ids.twin);
    await page.locator('.tw-map canvas.maplibregl-canvas').waitFor();
    // Drawn: the bundled countries are rendered features, and land, borders and water give a
    // picture that does not compress to nothing.
    const map = page.getByTestId('twin-map');
    await expect
      .poll(async () => Number(await map.getAttribute('data-rendered-countries')), { timeout: 15_000 })
      .toBeGreaterThan(3);
    const picture = await map.screenshot();
    expect(picture.length).toBeGreaterThan(15_000);

    await marker.click();
    await page.getByRole('link', { name: 'Open twin' }).waitFor();
    await h.shot('twins-06-map');
    await page.getByRole('button', { name: 'site', exact: true }).click();
    await expect.poll(() => page.getByTestId('twin-marker').count()).toBe(0);
    await page.getByRole('button', { name: 'site', exact: true }).click();
    await page.getByRole('button', { name: 'pump', exact: true }).click();
    await expect.poll(() => page.getByTestId('twin-marker').count()).toBe(1);

    // Dark theme: the basemap follows.
    await page.getByTestId('theme-toggle').click();
    // Paint changes fade in over 300 ms.
    await page.waitForTimeout(1000);
    await h.shot('twins-07-map-dark');

    expect(h.foreignRequests, 'no request leaves loopback').toEqual([]);
    await fs.access(path.join(SCREENSHOT_DIR, 'twins-06-map.png'));
  });

  it("offers the keys a device's driver declares before the device has sent anything", async () => {
    const { page } = h;
    const driver = await xapi('POST', '/xapi/v1/device-drivers', {
      title: 'Pressure sensor (JSON)',
      parser: { type: 'json' },
      targetVariables: [
        { key: 'pressure', type: 'number', unit: 'bar' },
        { key: 'running', type: 'boolean' },
      ],
    });
    const quiet = await xapi('POST', '/xapi/v1/virtual-devices', {
      device_id: 'pump-1-pressure',
      title: 'Pump 1 pressure',
      connectorId: device.connector.id,
      deviceDriverId: driver.id,
    });
    await page.goto(`${h.server.baseUrl}/#/twins/${ids.twin}`);
    await page.getByRole('button', { name: 'Add state' }).click();
    const editor = page.getByRole('dialog', { name: 'Add a data state' });
    await editor.locator('#state-source-type').selectOption('connector');
    // The account's one connector is chosen already.
    await expect
      .poll(() => editor.locator('#state-source-connectorId').inputValue())
      .toBe(device.connector.id);
    await editor.locator('#state-source-deviceId').selectOption(quiet.id);

    // Nothing sent yet: the picker offers the driver's keys, each with its type and unit.
    const keys = editor.getByTestId('device-keys');
    const pressure = keys.getByRole('button', { name: /^pressure/ });
    await pressure.waitFor();
    expect(await keys.getByRole('button').count()).toBe(2);
    expect(await pressure.getByTestId('device-key-type').textContent()).toBe('Number in bar');
    expect(await pressure.textContent()).toMatch(/not sent yet/);
    expect(
      await keys
        .getByRole('button', { name: /^running/ })
        .getByTestId('device-key-type')
        .textContent(),
    ).toBe('Boolean');
    await h.shot('twins-08-declared-keys');

    // Picked, it fills the device key and the state's key, and saves without the unknown-key warning.
    await pressure.click();
    expect(await editor.locator('#state-source-stateKey').inputValue()).toBe('pressure');
    expect(await editor.getByLabel('Key', { exact: true }).inputValue()).toBe('pressure');
    await editor.getByRole('button', { name: 'Add state' }).click();
    await page.getByTestId('state-row-pressure').waitFor();
    expect(await editor.count()).toBe(0);
    const saved = (
      await xapi<{ data: { key: string; source: unknown }[] }>(
        'GET',
        `/xapi/v1/digital-twins/${ids.twin}/states`,
      )
    ).data.find((state) => state.key === 'pressure');
    expect(saved?.source).toMatchObject({ type: 'connector', deviceId: quiet.id, stateKey: 'pressure' });
  });
});
