import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsoleHarness, type ConsoleHarness } from './support/console-harness.js';

/**
 * axe-core finds no serious or critical violations on the main pages, in the
 * light and the dark theme. axe runs inside the page (injected from node_modules, no network).
 */

const EMAIL = 'a11y@stellwerk.test';
const PASSWORD = 'accessible password 123';
const PAGES = [
  '/',
  '/connectors',
  '/devices',
  '/drivers',
  '/drivers/new',
  '/templates',
  '/templates/new',
  '/twins',
  '/map',
  '/gateways',
  '/security',
  '/accounts',
  '/access',
  '/access/roles',
  '/access/api-keys',
  '/alarms',
  '/alarms/groups',
  '/alarms/reports',
  '/rules',
  '/rules/new',
  '/flows',
  '/flows/new',
  '/flows/filters',
  '/flows/filters/new',
  '/flows/transformers',
];

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

let h: ConsoleHarness;
let axeSource: string;

async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the console's Content-Security-Policy (rightly) refuses inline scripts.
  await page.evaluate(axeSource);
  // These functions run in the page; the test's own TypeScript has no DOM types, hence globalThis.
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } }).axe;
    return (await axe.run()).violations;
  });
  return (violations as Violation[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

describe('console accessibility', () => {
  beforeAll(async () => {
    axeSource = await fs.readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    h = await startConsoleHarness({ STELLWERK_ADMIN_EMAIL: EMAIL, STELLWERK_ADMIN_PASSWORD: PASSWORD });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('has no serious or critical axe violations on the login page and the main pages, light and dark', async () => {
    const { page } = h;
    // No fades: axe must judge colours at rest, not halfway through a transition.
    await page.emulateMedia({ reducedMotion: 'reduce' });
    await page.goto(h.server.baseUrl);
    await page.getByLabel('E-mail').waitFor();
    const found: Record<string, string[]> = { login: await seriousViolations(page) };
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('navigation', { name: 'Main navigation' }).waitFor();
    for (const theme of ['light', 'dark'] as const) {
      for (const path of PAGES) {
        await page.goto(`${h.server.baseUrl}/#${path}`);
        await page.evaluate((t) => {
          const page = globalThis as unknown as {
            document: { documentElement: { dataset: Record<string, string> } };
          };
          page.document.documentElement.dataset.theme = t;
        }, theme);
        await page.locator('h1').first().waitFor();
        // Let lazy parts (map, lists) render before checking them.
        await page.waitForLoadState('networkidle');
        found[`${theme} ${path}`] = await seriousViolations(page);
      }
    }
    const failing = Object.entries(found).filter(([, list]) => list.length > 0);
    expect(failing, JSON.stringify(failing, null, 2)).toEqual([]);
    expect(h.foreignRequests).toEqual([]);
  });
});
