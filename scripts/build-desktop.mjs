// @ts-check
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DIST, ROOT } from './build-stamp.mjs';

/**
 * `npm run build:desktop`: the shell (tsconfig.electron.json) into dist/electron, then the
 * settings window's page, a browser script with its own tsconfig (DOM library), beside its HTML
 * and CSS, which tsc does not copy.
 */

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
for (const project of ['tsconfig.electron.json', 'electron/settings-window/tsconfig.json']) {
  const result = spawnSync(process.execPath, [tsc, '-p', project], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`build:desktop failed: tsc -p ${project} reported errors (see above)`);
    process.exit(result.status ?? 1);
  }
}

const page = path.join(ROOT, 'electron', 'settings-window');
const target = path.join(DIST, 'electron', 'settings-window');
fs.mkdirSync(target, { recursive: true });
for (const file of fs.readdirSync(page)) {
  if (/\.(html|css)$/.test(file)) fs.copyFileSync(path.join(page, file), path.join(target, file));
}
console.log('built dist/electron');
