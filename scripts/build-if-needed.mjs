// @ts-check
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildInputs, DIST, readStamp, ROOT, staleReason } from './build-stamp.mjs';

/**
 * Run by `npm start` before the server: builds dist/ only when it is missing or older than
 * its inputs, so a fresh clone starts with `npm ci && npm start` and later starts are instant.
 * An installed package ships dist/ without server/src; then there is nothing to compare.
 */

const entry = path.join(DIST, 'server', 'src', 'main.js');
if (!fs.existsSync(path.join(ROOT, 'server', 'src'))) {
  if (!fs.existsSync(entry)) {
    console.error(`Stellwerk cannot start: neither ${entry} nor the sources in server/src exist`);
    process.exit(1);
  }
  process.exit(0);
}

const reason = staleReason(readStamp(), buildInputs(), fs.existsSync(entry));
if (reason === undefined) process.exit(0);

console.log(`building Stellwerk: ${reason}`);
// npm sets npm_execpath to its own CLI; running it with this Node keeps the pinned Node 24.
const npmCli = process.env.npm_execpath;
const result = npmCli
  ? spawnSync(process.execPath, [npmCli, 'run', 'build'], { cwd: ROOT, stdio: 'inherit' })
  : spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' });
process.exit(result.status ?? 1);
