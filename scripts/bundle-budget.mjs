#!/usr/bin/env node
/**
 * `npm run bundle:budget` (a script, not a test): builds the console into a
 * temporary folder and prints what the first page load costs — the JavaScript that index.html loads
 * or preloads, gzipped — against the 250 kB budget, and every chunk loaded later (maps, charts).
 * Exits 1 when the initial JavaScript is over budget.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET_BYTES = 250 * 1000;
const root = path.resolve(import.meta.dirname, '..');
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-bundle-'));

const build = spawnSync(
  process.execPath,
  [
    path.join(root, 'node_modules', 'vite', 'bin', 'vite.js'),
    'build',
    '--config',
    'renderer/vite.config.ts',
    '--logLevel',
    'warn',
  ],
  {
    cwd: root,
    env: { ...process.env, STELLWERK_CONSOLE_OUT: out, STELLWERK_CONSOLE_PRECOMPRESS: 'off' },
    stdio: 'inherit',
  },
);
if (build.status !== 0) process.exit(build.status ?? 1);

const html = fs.readFileSync(path.join(out, 'index.html'), 'utf8');
const initial = new Set(
  [...html.matchAll(/<(?:script[^>]*\bsrc|link[^>]*\brel="modulepreload"[^>]*\bhref)="\/?([^"]+\.js)"/g)].map(
    (m) => m[1],
  ),
);
const sizes = fs
  .readdirSync(path.join(out, 'assets'))
  .filter((name) => name.endsWith('.js'))
  .map((name) => {
    const bytes = fs.readFileSync(path.join(out, 'assets', name));
    return { name: `assets/${name}`, raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  })
  .sort((a, b) => b.gzip - a.gzip);
fs.rmSync(out, { recursive: true, force: true });

const kB = (n) => `${(n / 1000).toFixed(1)} kB`;
const first = sizes.filter((s) => initial.has(s.name));
const later = sizes.filter((s) => !initial.has(s.name));
const total = first.reduce((sum, s) => sum + s.gzip, 0);
console.log('Initial route JavaScript (loaded by index.html):');
for (const s of first) console.log(`  ${s.name}  ${kB(s.gzip)} gzip (${kB(s.raw)})`);
console.log(
  `  total ${kB(total)} gzip — budget ${kB(BUDGET_BYTES)}: ${total <= BUDGET_BYTES ? 'within' : 'OVER'}`,
);
console.log('Loaded later, when a page needs them:');
for (const s of later) console.log(`  ${s.name}  ${kB(s.gzip)} gzip (${kB(s.raw)})`);
process.exit(total <= BUDGET_BYTES && first.length > 0 ? 0 : 1);
