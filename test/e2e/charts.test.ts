import fs from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seriousViolations } from './support/axe-check.js';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { pictureStats } from './support/screenshot-check.js';
import { addRoutedState, loginXapi, seedMqttDevice, signIn, type Xapi } from './support/seed.js';

const EMAIL = 'grace@stellwerk.test';
const PASSWORD = 'compiler before breakfast';

/**
 * Charts in Chromium: a twin with two states of different units gets values over the broker
 * (`mosquitto_pub`); the twin page charts both over 5 minutes on two axes, downloads exactly the
 * chart's query as CSV (checked against the published values), re-queries with a finer
 * aggregation when zoomed in with the mouse wheel; a dashboard chart widget shows both states.
 */
let h: ConsoleHarness;
let xapi: Xapi;
const ids: Record<string, string> = {};
const FLOW = [12.5, 13.25, 14, 13.75, 12];
const PRESSURE = [4.05, 4.1, 3.95, 4.2, 4.15];
/** The bodies of the console's time-series queries, in order. */
const queries: string[] = [];

const chartOf = () => h.page.getByTestId('state-chart').getByTestId('time-series-chart');

describe('line charts with several states, zoom and CSV download (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    const device = await seedMqttDevice(xapi, h.mqttPort, {
      connectorTitle: 'Pump station gateway',
      driver: { title: 'Pump meter (JSON)', parser: { type: 'json' } },
      device: { device_id: 'pump-7-meter', title: 'Pump 7 meter', referenceId: 'PUMP-7' },
    });
    ids.twin = (await xapi('POST', '/xapi/v1/digital-twins', { title: 'Pump 7', referenceId: 'PUMP-7' })).id;
    ids.flow = await addRoutedState(xapi, ids.twin, {
      key: 'flow',
      title: 'Flow',
      unit: 'm³/h',
      meta: { visual: { type: 'line-chart' } },
    });
    ids.pressure = await addRoutedState(xapi, ids.twin, { key: 'pressure', title: 'Pressure', unit: 'bar' });
    for (const [i, flow] of FLOW.entries()) {
      await device.publish({ flow, pressure: PRESSURE[i] });
      // Distinct receive times, so the order of the points is the order of publishing.
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Stored: both states have all their points before the page reads them (bounded wait).
    const stored = async () =>
      (
        await xapi<{ rows: number[][] }>('POST', '/xapi/v1/timeseries/query', {
          query: `SELECT count(*) WHERE twin.id = '${ids.twin}' AND time >= now() - 1h`,
        })
      ).rows[0]?.[0] ?? 0;
    for (let attempt = 0; attempt < 150 && (await stored()) < FLOW.length * 2; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await stored()).toBe(FLOW.length * 2);
    ids.board = (
      await xapi('POST', '/xapi/v1/dashboards', {
        title: 'Pump station',
        layout: {
          version: 1,
          widgets: [
            {
              id: 'c',
              type: 'line-chart',
              title: '',
              x: 0,
              y: 0,
              w: 8,
              h: 5,
              twinId: ids.twin,
              stateIds: [ids.flow, ids.pressure],
              range: '5m',
            },
          ],
        },
      })
    ).id;
    h.page.on('request', (request) => {
      if (request.url().endsWith('/xapi/v1/timeseries/query') && request.method() === 'POST')
        queries.push(request.postData() ?? '');
    });
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('charts two states with their own units over 5 minutes and downloads the chart as CSV', async () => {
    const { page } = h;
    await signIn(page, h.server.baseUrl, EMAIL, PASSWORD);
    await page.goto(`${h.server.baseUrl}/#/twins/${ids.twin}`);
    const chart = chartOf();
    await expect.poll(() => chart.getAttribute('data-points'), { timeout: 15_000 }).toBe(String(FLOW.length));
    await page.getByLabel('Add a state').selectOption({ label: 'Pressure (bar)' });
    await chart.getByRole('button', { name: '5 min', exact: true }).click();
    // The five-minute answer is in (the hour before it had the same points).
    const span = async () =>
      Date.parse((await chart.getAttribute('data-to'))!) -
      Date.parse((await chart.getAttribute('data-from'))!);
    await expect.poll(span).toBe(5 * 60_000);
    expect(await chart.getAttribute('data-points')).toBe(String(FLOW.length * 2));
    expect(await chart.getAttribute('data-bucket')).toBe('raw');
    const legend = chart.getByRole('list', { name: 'States in this chart' });
    expect(await legend.textContent()).toMatch(/Flow\s*\(m³\/h\).*Pressure\s*\(bar\)/s);
    // The last query is for both states over five minutes, raw.
    const query = (JSON.parse(queries.at(-1)!) as { query: string }).query;
    expect(query).toContain(`state.id IN ('${ids.flow}', '${ids.pressure}')`);
    // Drawn: lines, bands, axes and labels give a picture of many colours, not an empty box.
    await expect
      .poll(async () => pictureStats(await chart.locator('canvas').first().screenshot()).distinctColours)
      .toBeGreaterThan(40);
    await h.shot('charts-01-two-states-5-minutes');

    // Even ticks: the time axis on whole minutes at one step, each value axis at 1, 2 or 5 × 10ⁿ.
    const times = (await chart.getAttribute('data-time-ticks'))!.split(' ');
    expect(times.length).toBeGreaterThanOrEqual(3);
    const minutes = times.map((label) => {
      expect(label).toMatch(/^\d\d:\d\d$/);
      return Number(label.slice(0, 2)) * 60 + Number(label.slice(3));
    });
    const timeSteps = minutes.slice(1).map((minute, index) => (minute - minutes[index]! + 1440) % 1440);
    expect(new Set(timeSteps).size, times.join(' ')).toBe(1);
    const axes = (await chart.getAttribute('data-value-ticks'))!
      .split(' | ')
      .map((axis) => axis.split(' ').map(Number));
    expect(axes).toHaveLength(2);
    for (const values of axes) {
      const step = values[1]! - values[0]!;
      const power = 10 ** Math.floor(Math.log10(step) + 1e-9);
      expect(
        [1, 2, 5].some((factor) => Math.abs(step - factor * power) < power * 1e-6),
        values.join(' '),
      ).toBe(true);
      for (const value of values)
        expect(Math.abs(value / step - Math.round(value / step))).toBeLessThan(1e-6);
    }
    // The axes cover the points: flow 12–14 m³/h, pressure 3.95–4.2 bar.
    expect(axes[0]![0]).toBeLessThanOrEqual(12);
    expect(axes[0]!.at(-1)).toBeGreaterThanOrEqual(14);
    expect(axes[1]![0]).toBeLessThanOrEqual(3.95);
    expect(axes[1]!.at(-1)).toBeGreaterThanOrEqual(4.2);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      chart.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(
      /^stellwerk-history-of-flow-pressure-\d{8}T\d{4}Z-\d{8}T\d{4}Z\.csv$/,
    );
    const csv = await fs.readFile(await download.path(), 'utf8');
    const rows = parse<Record<string, string>>(csv, { columns: true });
    expect(Object.keys(rows[0]!)).toEqual([
      'time',
      'twin',
      'state_key',
      'state',
      'unit',
      'value',
      'state_id',
    ]);
    const values = (key: string) =>
      rows.filter((row) => row.state_key === key).map((row) => Number(row.value));
    expect(values('flow')).toEqual(FLOW);
    expect(values('pressure')).toEqual(PRESSURE);
    expect(new Set(rows.map((row) => `${row.twin}|${row.unit}`))).toEqual(
      new Set(['Pump 7|m³/h', 'Pump 7|bar']),
    );
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('re-queries a finer aggregation when zoomed in with the mouse wheel', async () => {
    const { page } = h;
    const chart = chartOf();
    // A custom six hours with the points in the middle (the fields start at the window shown, in the
    // console's zone): 1-minute means.
    await chart.getByRole('button', { name: 'Custom', exact: true }).click();
    const end = await chart.getByLabel('To', { exact: true }).inputValue();
    const shifted = (hours: number) =>
      new Date(Date.parse(`${end}Z`) + hours * 3_600_000).toISOString().slice(0, 19);
    await chart.getByLabel('From', { exact: true }).fill(shifted(-3));
    await chart.getByLabel('To', { exact: true }).fill(shifted(3));
    await chart.getByRole('button', { name: 'Show', exact: true }).click();
    await expect.poll(() => chart.getAttribute('data-bucket')).toBe('1m');
    expect(await chart.getAttribute('data-points')).not.toBe('0');
    const before = Number(await chart.getAttribute('data-queries'));
    const sent = queries.length;
    // Zoom in at the middle of the plot (its margins are equal with one axis each side).
    const box = (await chart.getByTestId('chart-canvas-host').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    // Spaced beyond echarts' wheel throttle (100 ms), so each step zooms.
    for (let step = 0; step < 30; step++) {
      await page.mouse.wheel(0, -300);
      await page.waitForTimeout(120);
    }
    await expect.poll(() => chart.getAttribute('data-bucket'), { timeout: 10_000 }).toBe('raw');
    expect(Number(await chart.getAttribute('data-queries'))).toBeGreaterThan(before);
    const zoomedQuery = (JSON.parse(queries.at(-1)!) as { query: string }).query;
    expect(queries.length).toBeGreaterThan(sent);
    expect(zoomedQuery).not.toContain('bucket(');
    const span =
      Date.parse((await chart.getAttribute('data-to'))!) -
      Date.parse((await chart.getAttribute('data-from'))!);
    expect(span).toBeLessThanOrEqual(60 * 60_000);
    // The zoomed window still holds the points, now every one of them.
    await expect.poll(() => chart.getAttribute('data-points')).toBe(String(FLOW.length * 2));
    await h.shot('charts-02-zoomed');

    await chart.getByRole('button', { name: 'Reset zoom' }).click();
    await expect.poll(() => chart.getAttribute('data-bucket')).toBe('1m');
  });

  it('shows both states in a dashboard chart widget', async () => {
    const { page } = h;
    await page.goto(`${h.server.baseUrl}/#/dashboards/${ids.board}`);
    const widget = page.getByTestId('line-chart-widget');
    await expect
      .poll(() => widget.getAttribute('data-points'), { timeout: 15_000 })
      .toBe(String(FLOW.length * 2));
    expect(await widget.getByRole('list', { name: 'States in this chart' }).textContent()).toMatch(
      /Flow.*Pressure/s,
    );
    await h.shot('charts-03-dashboard-widget');
    expect(await seriousViolations(page)).toEqual([]);
  });
});
