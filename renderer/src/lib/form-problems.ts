import { tick } from 'svelte';
import { schemaProblem, type SchemaProblemTexts } from './format/schema-problem';

/** The error body's `details` (`{ path, message }`) shown at the form field their path names. */

/**
 * The error's `details` as messages per body path. The server names only the path for its own
 * checks (they get `fallback`, the error's message; an empty fallback skips them), schema errors carry
 * a keyword, read in the console's language (`t`: `i18n.t.schemaProblems`), or their own message.
 * `under` drops a leading path segment where a form edits part of the body.
 */
export function problemsByPath(
  details: unknown[],
  fallback: string,
  t: SchemaProblemTexts,
  { under }: { under?: string } = {},
): Map<string, string> {
  const problems = new Map<string, string>();
  for (const item of details) {
    if (typeof item !== 'object' || item === null) continue;
    const { path } = item as { path?: unknown };
    if (typeof path !== 'string' || !path) continue;
    const key = under && path.startsWith(under) ? path.slice(under.length) : path;
    const note = schemaProblem(item, t) ?? fallback;
    if (note) problems.set(key, problems.has(key) ? `${problems.get(key)}; ${note}` : note);
  }
  return problems;
}

/** The message for a field: its own path or anything below it (`/trigger/conditions/0` → `/trigger/conditions/0/value`). */
export function problemAt(problems: Map<string, string>, path: string): string | undefined {
  const found: string[] = [];
  for (const [key, message] of problems) if (key === path || key.startsWith(`${path}/`)) found.push(message);
  return found.length ? found.join('; ') : undefined;
}

/**
 * After a refusal, moves the focus to the first field marked invalid within `scope` (an element or
 * a selector), once the marks are on the page: keyboard users land on what to fix, and a screen
 * reader reads the field's message where it is.
 */
export async function focusFirstInvalid(scope: ParentNode | string | null | undefined): Promise<void> {
  await tick();
  const root = typeof scope === 'string' ? document.querySelector(scope) : scope;
  root?.querySelector<HTMLElement>('[aria-invalid="true"], [data-invalid="true"]')?.focus();
}
