import fs from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';
import { seriousViolations } from './support/axe-check.js';
import { loginXapi, signIn, type Xapi } from './support/seed.js';

const EMAIL = 'ada@stellwerk.test';
const PASSWORD = 'analytical engine 1843';

/**
 * CSV export plans in Chromium: a twin's level is set five times through the XAPI; the console
 * creates a German Excel plan with a live preview of its rows, runs it, watches the job finish with
 * its progress, and downloads the file, which parses back with the five values; then edits the
 * plan, the preview following each option, and deletes it.
 */
let h: ConsoleHarness;
let xapi: Xapi;

describe('CSV export plans in the console (Chromium)', () => {
  beforeAll(async () => {
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
    xapi = await loginXapi(h.server.baseUrl, EMAIL, PASSWORD);
    const twin = await xapi('POST', '/xapi/v1/digital-twins', { title: 'Reservoir', tags: ['water'] });
    const state = await xapi('POST', `/xapi/v1/digital-twins/${twin.id}/states`, { key: 'level', unit: 'm' });
    for (const value of [1.5, 2.25, 3, 2.75, 2.5])
      await xapi('PUT', `/xapi/v1/states/${state.id}`, { value });
    await h.page.emulateMedia({ reducedMotion: 'reduce' });
    await signIn(h.page, h.server.baseUrl, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await h?.close();
  });

  it('creates a plan with a live preview, runs it, shows its progress and downloads the file', async () => {
    const { page } = h;
    await page
      .getByRole('navigation', { name: 'Main navigation' })
      .getByRole('link', { name: 'Exports' })
      .click();
    await page.getByRole('button', { name: 'New export plan' }).click();
    const form = page.getByRole('region', { name: 'Export plan', exact: true });
    await form.getByLabel('Title', { exact: true }).fill('Reservoir levels');
    await form.getByRole('button', { name: 'Add condition' }).click();
    await form.getByLabel('Value').fill('water');
    await form.getByLabel('State keys').fill('level');
    await form.getByRole('button', { name: 'German Excel defaults' }).click();
    // No button: the preview follows the options.
    const preview = page.getByTestId('export-preview');
    await expect.poll(() => preview.locator('tbody tr').count()).toBe(5);
    await expect
      .poll(() => preview.locator('tbody tr').first().locator('td').nth(5).textContent())
      .toBe('1,5');
    await h.shot('exports-01-preview');
    await form.getByRole('button', { name: 'Save' }).click();

    const plan = page.getByTestId('export-plan-row').filter({ hasText: 'Reservoir levels' });
    await plan.getByRole('button', { name: 'Run now Reservoir levels' }).click();
    const job = page.getByTestId('export-job-row').first();
    await expect.poll(() => job.getAttribute('data-status'), { timeout: 20_000 }).toBe('finished');
    expect(await job.textContent()).toContain('5 of about 5 rows');
    expect(await plan.textContent()).toContain('Finished');
    await h.shot('exports-02-finished');
    expect(await seriousViolations(page)).toEqual([]);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      job.getByRole('link', { name: 'Download' }).click(),
    ]);
    const file = await fs.readFile(await download.path());
    expect([...file.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const rows: string[][] = parse(file, { delimiter: ';', bom: true });
    // The preset names the columns in the console's language and writes times spreadsheets read as dates.
    expect(rows[0]).toEqual(['Time', 'Twin', 'Hierarchy', 'State', 'Unit', 'Value']);
    expect(rows.slice(1).map((r) => r[5])).toEqual(['1,5', '2,25', '3', '2,75', '2,5']);
    for (const row of rows.slice(1)) expect(row[0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(,\d{3})?$/);
    expect(h.foreignRequests, 'no request leaves loopback').toEqual([]);
  });

  it('edits a saved plan with the preview following each option, then deletes the plan', async () => {
    const { page } = h;
    const plan = page.getByTestId('export-plan-row').filter({ hasText: 'Reservoir levels' });
    await plan.getByRole('button', { name: 'Edit Reservoir levels' }).click();
    const form = page.getByRole('region', { name: 'Export plan: Reservoir levels' });
    expect(await form.getByLabel('Value').inputValue()).toBe('water');
    const preview = page.getByTestId('export-preview');
    const firstValue = () => preview.locator('tbody tr').first().locator('td').nth(5).textContent();
    await expect.poll(firstValue).toBe('1,5');
    expect(await seriousViolations(page)).toEqual([]);
    await form.getByLabel('Decimal separator').selectOption('.');
    await expect.poll(firstValue).toBe('1.5');
    // Cancel with a change unsaved asks first; staying keeps the draft.
    const asked: string[] = [];
    page.once('dialog', (dialog) => {
      asked.push(dialog.type());
      void dialog.dismiss();
    });
    await form.getByRole('button', { name: 'Cancel' }).click();
    expect(asked).toEqual(['confirm']);
    expect(await form.getByLabel('Decimal separator').inputValue()).toBe('.');
    await form.getByLabel('Header names').fill('value=Pegel');
    await expect.poll(() => preview.locator('thead th').nth(5).textContent()).toBe('Pegel');
    await form.getByLabel('Averages').selectOption('day');
    await expect.poll(() => preview.locator('tbody tr').count()).toBe(1);
    await expect.poll(firstValue).toBe('2.4');
    await h.shot('exports-03-edit');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => form.count()).toBe(0);
    const saved = await xapi<{ data: Array<{ format: unknown; shape: { average: string } }> }>(
      'GET',
      '/xapi/v1/export-plans',
    );
    const [stored] = saved.data;
    expect(stored!.format).toMatchObject({
      decimalSeparator: '.',
      timeFormat: 'spreadsheet',
      headerNames: { value: 'Pegel' },
    });
    expect(stored!.shape.average).toBe('day');

    await plan.getByRole('button', { name: 'Delete Reservoir levels' }).click();
    await page.getByTestId('confirm-dialog').getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => plan.count()).toBe(0);
    expect(await page.getByTestId('export-plans').textContent()).toContain('No export plans yet.');
  });
});
