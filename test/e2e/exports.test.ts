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
 * creates a German Excel plan with a preview of its rows, runs it, watches the job finish with its
 * progress, and downloads the file, which parses back with the five values.
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

  it('creates a plan with a preview, runs it, shows its progress and downloads the file', async () => {
    const { page } = h;
    await page
      .getByRole('navigation', { name: 'Main navigation' })
      .getByRole('link', { name: 'Exports' })
      .click();
    await page.getByRole('button', { name: 'New export plan' }).click();
    const form = page.getByRole('region', { name: 'Export plan' });
    await form.getByLabel('Title').fill('Reservoir levels');
    await form.getByLabel('Twins with tag').fill('water');
    await form.getByLabel('State keys').fill('level');
    await form.getByLabel('German Excel').check();
    await form.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByTestId('export-preview');
    await expect.poll(() => preview.locator('tbody tr').count()).toBe(5);
    expect(await preview.locator('tbody tr').first().locator('td').nth(5).textContent()).toBe('1,5');
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
    expect(rows[0]).toEqual(['time', 'twin', 'hierarchy', 'state', 'unit', 'value']);
    expect(rows.slice(1).map((r) => r[5])).toEqual(['1,5', '2,25', '3', '2,75', '2,5']);
    expect(h.foreignRequests, 'no request leaves loopback').toEqual([]);
  });
});
