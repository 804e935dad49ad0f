import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

let axeSource: string | undefined;

/**
 * axe-core run inside the page (injected from node_modules through the DevTools protocol, since the
 * console's Content-Security-Policy refuses inline scripts): the serious and critical violations, one
 * line each with the elements concerned.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  axeSource ??= await fs.readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axeSource);
  // Runs in the page; the test's own TypeScript has no DOM types, hence globalThis.
  const violations = (await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } }).axe;
    return (await axe.run()).violations;
  })) as { id: string; impact: string | null; nodes: { target: string[] }[] }[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
