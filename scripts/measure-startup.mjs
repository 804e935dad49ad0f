#!/usr/bin/env node
// Measures what docs/operations.md reports: time from spawning the server to the first
// `GET /health` 200 with a new data directory (initdb included) and with an existing one, and the
// idle memory of the server process and of its embedded PostgreSQL.
//
//   node scripts/measure-startup.mjs [--runs 3] [--idle 10] [--source]
//
// By default it runs the build (`node dist/server/src/main.js`, what `npm start` runs; rebuilt first
// when stale, as `npm start` does); `--source` runs `node --import tsx server/src/main.ts` instead.
// Linux only (/proc).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? Number(args[index + 1]) : fallback;
};
const runs = option('runs', 3);
const idleSeconds = option('idle', 10);
const fromSource = args.includes('--source');

// The flags of server/src/platform/node-flags.ts, as every launcher passes them.
const flags = ['--max-semi-space-size=64', '--v8-pool-size=0'];
const entry = [
  ...flags,
  ...(fromSource ? ['--import', 'tsx', 'server/src/main.ts'] : ['dist/server/src/main.js']),
];
if (!fromSource) {
  const builder = path.join(root, 'scripts/build-if-needed.mjs');
  const build = existsSync(builder)
    ? spawnSync(process.execPath, [builder], { cwd: root, stdio: 'inherit' })
    : spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(1);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** Spawns the server and resolves with the milliseconds until `GET /health` first answers 200. */
async function start(dataDir) {
  const port = await freePort();
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('STELLWERK_') && key !== 'DATABASE_URL'),
  );
  const began = performance.now();
  const child = spawn(process.execPath, entry, {
    cwd: root,
    env: {
      ...env,
      STELLWERK_DATA_DIR: dataDir,
      STELLWERK_PG_PORT: '0',
      STELLWERK_HTTP_HOST: '127.0.0.1',
      STELLWERK_HTTP_PORT: String(port),
      STELLWERK_NODE_NAME: 'measure',
      STELLWERK_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  let exited = false;
  const exit = new Promise((resolve) => child.once('exit', (code) => ((exited = true), resolve(code))));
  while (!exited) {
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ok) return { child, exit, ms: Math.round(performance.now() - began) };
    if (performance.now() - began > 120_000) break;
    await sleep(10);
  }
  child.kill('SIGKILL');
  throw new Error(`server did not answer /health: ${stderr}`);
}

async function stop(server) {
  server.child.kill('SIGTERM');
  const code = await server.exit;
  if (code !== 0) throw new Error(`server exited with ${code} after SIGTERM`);
}

/** kB from /proc/<pid>/status (VmRSS) or /proc/<pid>/smaps_rollup (Pss). */
async function procKb(pid, file, field) {
  const text = await fs.readFile(`/proc/${pid}/${file}`, 'utf8').catch(() => '');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

async function childrenOf(pid) {
  const text = await fs.readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return text.split(/\s+/).filter(Boolean).map(Number);
}

async function memory(server, dataDir) {
  const postmaster = Number(
    (await fs.readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0],
  );
  const pgPids = [postmaster, ...(await childrenOf(postmaster))];
  let pgRss = 0;
  let pgPss = 0;
  for (const pid of pgPids) {
    pgRss += await procKb(pid, 'status', 'VmRSS');
    pgPss += await procKb(pid, 'smaps_rollup', 'Pss');
  }
  return {
    serverRssMb: (await procKb(server.child.pid, 'status', 'VmRSS')) / 1024,
    postmasterRssMb: (await procKb(postmaster, 'status', 'VmRSS')) / 1024,
    postgresProcesses: pgPids.length,
    postgresRssSumMb: pgRss / 1024,
    postgresPssSumMb: pgPss / 1024,
  };
}

const results = [];
for (let run = 1; run <= runs; run++) {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-measure-'));
  // As root the embedded PostgreSQL runs as `postgres`, which must be able to enter the folder.
  await fs.chmod(base, 0o755);
  const dataDir = path.join(base, 'data');
  try {
    const first = await start(dataDir);
    await stop(first);
    const again = await start(dataDir);
    await sleep(idleSeconds * 1000);
    const mem = await memory(again, dataDir);
    await stop(again);
    const result = { run, firstStartMs: first.ms, existingDataDirStartMs: again.ms, ...mem };
    results.push(result);
    console.error(JSON.stringify(result));
  } finally {
    await fs.rm(base, { recursive: true, force: true });
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const keys = Object.keys(results[0]).filter((key) => key !== 'run');
const summary = Object.fromEntries(
  keys.map((key) => [key, Math.round(median(results.map((r) => r[key])) * 10) / 10]),
);
console.log(
  JSON.stringify(
    {
      entry: entry.join(' '),
      runs,
      idleSeconds,
      node: process.version,
      cpus: os.cpus().length,
      median: summary,
    },
    null,
    2,
  ),
);
