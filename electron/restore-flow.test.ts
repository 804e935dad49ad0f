import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_ENTRY } from './cli-runner.js';
import { backUp, backupFileName, restoreFlow, restoreTarget } from './restore-flow.js';
import type { SpawnSpec } from './server-host.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * A stand-in for dist/server/src/cli/stellwerk.js (the real command is built elsewhere): `restore`
 * fills STELLWERK_DATA_DIR from the "archive" (a JSON file) or fails with a one-line reason;
 * `backup` writes the data directory's marker into the --out file.
 */
const FAKE_CLI = `
  const fs = require('node:fs');
  const path = require('node:path');
  const [command, a, b] = process.argv.slice(2);
  const dataDir = process.env.STELLWERK_DATA_DIR;
  if (command === 'backup') {
    fs.writeFileSync(b, JSON.stringify({ marker: fs.readFileSync(path.join(dataDir, 'marker'), 'utf8') }));
    console.log('Backup written to ' + b);
    process.exit(0);
  }
  const archive = JSON.parse(fs.readFileSync(a, 'utf8'));
  if (archive.tampered) { console.error('restore: checksum mismatch, nothing was changed'); process.exit(2); }
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(path.join(dataDir, 'marker'), archive.marker);
  console.log('Restored into ' + dataDir);
`;

function setup() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-restore-'));
  dirs.push(root);
  fs.mkdirSync(path.dirname(path.join(root, CLI_ENTRY)), { recursive: true });
  fs.writeFileSync(path.join(root, CLI_ENTRY), FAKE_CLI);
  const dataDir = path.join(root, 'data');
  fs.mkdirSync(dataDir);
  fs.writeFileSync(path.join(dataDir, 'marker'), 'original');
  fs.writeFileSync(path.join(dataDir, 'stellwerk.conf'), 'STELLWERK_HTTP_PORT=9090\n');
  const server: SpawnSpec = {
    command: process.execPath,
    args: ['--v8-pool-size=0', path.join(root, 'dist', 'server', 'src', 'main.js')],
    env: { STELLWERK_DATA_DIR: dataDir },
    cwd: root,
  };
  const events: string[] = [];
  const steps = {
    server,
    currentDataDir: dataDir,
    target: restoreTarget(dataDir, new Date('2026-03-01T08:30:00Z')),
    stopServer: async () => void events.push('stop'),
    startServer: async (dir: string) => void events.push(`start ${path.basename(dir)}`),
    useDataDir: (dir: string) => void events.push(`use ${path.basename(dir)}`),
  };
  return { root, dataDir, server, events, steps };
}

describe('backup and restore from the desktop menu', () => {
  it('names backups and restore folders by time, beside the current data', () => {
    const when = new Date('2026-03-01T08:30:59Z');
    expect(backupFileName(when)).toBe('stellwerk-backup-20260301-0830.tar.gz');
    expect(restoreTarget('/srv/stellwerk', when)).toBe(path.join('/srv', 'stellwerk-restored-20260301-0830'));
  });

  it('backs up through the CLI with the server’s data directory', async () => {
    const { root, server } = setup();
    const out = path.join(root, 'backup.json');
    const result = await backUp(server, out);
    expect(result).toMatchObject({ ok: true, message: `Backup written to ${out}` });
    expect(JSON.parse(fs.readFileSync(out, 'utf8'))).toEqual({ marker: 'original' });
  });

  it('stops the server, restores into a new folder with the old settings, switches to it and starts again', async () => {
    const { root, dataDir, events, steps } = setup();
    const archive = path.join(root, 'archive.json');
    fs.writeFileSync(archive, JSON.stringify({ marker: 'from the archive' }));
    const outcome = await restoreFlow({ ...steps, archive });
    expect(outcome).toEqual({ ok: true, message: `Restored into ${steps.target}`, dataDir: steps.target });
    expect(events).toEqual(['stop', 'use data-restored-20260301-0830', 'start data-restored-20260301-0830']);
    expect(fs.readFileSync(path.join(steps.target, 'marker'), 'utf8')).toBe('from the archive');
    expect(fs.readFileSync(path.join(steps.target, 'stellwerk.conf'), 'utf8')).toBe(
      'STELLWERK_HTTP_PORT=9090\n',
    );
    expect(fs.readFileSync(path.join(dataDir, 'marker'), 'utf8')).toBe('original');
  });

  it('on a refused archive starts the server on the unchanged data and reports the CLI’s reason', async () => {
    const { root, dataDir, events, steps } = setup();
    const archive = path.join(root, 'archive.json');
    fs.writeFileSync(archive, JSON.stringify({ tampered: true }));
    const outcome = await restoreFlow({ ...steps, archive });
    expect(outcome).toEqual({
      ok: false,
      message: 'restore: checksum mismatch, nothing was changed',
      dataDir,
    });
    expect(events).toEqual(['stop', 'start data']);
    expect(fs.existsSync(steps.target)).toBe(false);
  });

  it('reports a server that does not start again after the restore', async () => {
    const { root, steps } = setup();
    const archive = path.join(root, 'archive.json');
    fs.writeFileSync(archive, JSON.stringify({ marker: 'x' }));
    const outcome = await restoreFlow({
      ...steps,
      archive,
      startServer: () => Promise.reject(new Error('port 9090 is in use')),
    });
    expect(outcome).toMatchObject({ ok: true, startError: 'port 9090 is in use' });
  });
});
