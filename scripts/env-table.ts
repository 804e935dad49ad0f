import fs from 'node:fs';
import path from 'node:path';
import { ENV_VARIABLES } from '../server/src/config.js';

/**
 * `npm run docs:env`: rewrites the README's environment table from `ENV_VARIABLES`, so the
 * README can never list a variable the server does not read, or miss one it does.
 * env-table.test.ts fails when the committed README is stale.
 */

export const START_MARKER = '<!-- env:start -->';
export const END_MARKER = '<!-- env:end -->';
export const README = path.resolve(import.meta.dirname, '..', 'README.md');

interface Row {
  name: string;
  defaultText: string;
  description: string;
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

export function renderEnvTable(variables: readonly Row[] = ENV_VARIABLES): string {
  const lines = ['| Variable | Default | Description |', '|---|---|---|'];
  for (const v of variables)
    lines.push(`| \`${v.name}\` | ${cell(v.defaultText)} | ${cell(v.description)} |`);
  return lines.join('\n');
}

/** The README with the text between the markers replaced by `table`. */
export function replaceEnvTable(readme: string, table: string): string {
  const start = readme.indexOf(START_MARKER);
  const end = readme.indexOf(END_MARKER);
  if (start < 0 || end < start)
    throw new Error(`README.md needs the markers ${START_MARKER} and ${END_MARKER}`);
  return `${readme.slice(0, start + START_MARKER.length)}\n${table}\n${readme.slice(end)}`;
}

if (path.resolve(process.argv[1] ?? '') === import.meta.filename) {
  const before = fs.readFileSync(README, 'utf8');
  const after = replaceEnvTable(before, renderEnvTable());
  if (after === before) console.log('README.md environment table is up to date');
  else {
    fs.writeFileSync(README, after);
    console.log(`README.md environment table rewritten (${ENV_VARIABLES.length} variables)`);
  }
}
