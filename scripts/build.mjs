// @ts-check
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { buildInputs, DIST, ROOT, STAMP } from './build-stamp.mjs';

/**
 * `npm run build`: a clean `tsc -p tsconfig.build.json` into dist/, non-TypeScript files of
 * server/src copied beside the output, the web console (renderer/, Vite) into dist/renderer, and a
 * stamp that lets `npm start` skip the next build.
 * Written in Node rather than `rm -rf … && tsc` so that it also runs on Windows.
 */

const startedAt = Date.now();
const files = buildInputs().map((i) => i.path);
fs.rmSync(DIST, { recursive: true, force: true });

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
  cwd: ROOT,
  stdio: 'inherit',
});
if (result.status !== 0) {
  console.error('build failed: tsc reported errors (see above)');
  process.exit(result.status ?? 1);
}

// Assets (SQL, templates, JSON read at run time) travel with the code that reads them.
for (const file of files) {
  if (!file.startsWith('server/src/') || /\.(ts|cts|mts)$/.test(file)) continue;
  const target = path.join(DIST, file);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.copyFileSync(path.join(ROOT, file), target);
}

// The console the server serves at `/` (STELLWERK_CONSOLE_DIR defaults to dist/renderer).
const vitePackage = createRequire(import.meta.url).resolve('vite/package.json');
const vite = path.join(path.dirname(vitePackage), 'bin', 'vite.js');
const consoleBuild = spawnSync(
  process.execPath,
  [vite, 'build', '--config', 'renderer/vite.config.ts', '--logLevel', 'warn'],
  { cwd: ROOT, stdio: 'inherit' },
);
if (consoleBuild.status !== 0) {
  console.error('build failed: the console (renderer/) did not build (see above)');
  process.exit(consoleBuild.status ?? 1);
}

fs.writeFileSync(STAMP, `${JSON.stringify({ startedAt, files }, null, 2)}\n`);
console.log(`built dist/ in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
