import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { backupArgs, CLI_ENTRY, cliInvocation, restoreArgs, runCli } from './cli-runner.js';
import { desktopSettings, type SpawnSpec } from './server-host.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * A checkout-shaped folder whose dist/server/src/cli/stellwerk.js is a stand-in for the real CLI:
 * it records its arguments and environment, then behaves as the CLI contract says (a one-line
 * reason on stderr and a non-zero exit on failure).
 */
function fakeCheckout(script: string): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-cli-'));
  dirs.push(root);
  const entry = path.join(root, CLI_ENTRY);
  fs.mkdirSync(path.dirname(entry), { recursive: true });
  fs.writeFileSync(entry, script);
  return root;
}

const RECORDING_CLI = `
  const fs = require('node:fs');
  fs.writeFileSync(process.cwd() + '/call.json', JSON.stringify({
    argv: process.argv.slice(2),
    dataDir: process.env.STELLWERK_DATA_DIR,
    port: process.env.STELLWERK_HTTP_PORT,
    asNode: process.env.ELECTRON_RUN_AS_NODE ?? null,
  }));
  const [command, ...rest] = process.argv.slice(2);
  if (command === 'backup') { console.log('progress: copying'); console.log('Backup written to ' + rest[1]); process.exit(0); }
  console.log('checking the archive');
  console.error('warning: something minor');
  console.error('restore: checksum mismatch in db/base.tar, nothing was changed');
  process.exit(3);
`;

function serverSpec(root: string): SpawnSpec {
  const spec = desktopSettings({
    env: {
      STELLWERK_DATA_DIR: '/srv/stellwerk',
      STELLWERK_HTTP_PORT: '8181',
      STELLWERK_NODE: process.execPath,
    },
    isPackaged: false,
    resourcesPath: '',
    appPath: root,
    platform: process.platform,
  }).spawn;
  if (!spec) throw new Error('a local URL must have a spawn spec');
  return spec;
}

describe('stellwerk CLI from the desktop', () => {
  it('runs the CLI entry with the server’s Node, flags, environment and folder', () => {
    const spec = serverSpec('/opt/stellwerk');
    const call = cliInvocation(spec, backupArgs('/tmp/b.tar'));
    expect(call.command).toBe(process.execPath);
    expect(call.args).toEqual([
      '--max-semi-space-size=64',
      '--v8-pool-size=0',
      path.join('/opt/stellwerk', 'dist', 'server', 'src', 'cli', 'stellwerk.js'),
      'backup',
      '--out',
      '/tmp/b.tar',
    ]);
    expect(call.cwd).toBe('/opt/stellwerk');
    expect(call.env).toEqual(spec.env);
    expect(call.env.ELECTRON_RUN_AS_NODE).toBeUndefined();
  });

  it('can run on Electron’s binary in Node mode instead', () => {
    const call = cliInvocation(serverSpec('/opt/stellwerk'), restoreArgs('/tmp/b.tar'), {
      electronExecPath: '/opt/Stellwerk/stellwerk',
    });
    expect(call.command).toBe('/opt/Stellwerk/stellwerk');
    expect(call.args).toEqual([path.join('/opt/stellwerk', CLI_ENTRY), 'restore', '/tmp/b.tar']);
    expect(call.env.ELECTRON_RUN_AS_NODE).toBe('1');
    expect(call.env.STELLWERK_DATA_DIR).toBe('/srv/stellwerk');
  });

  it('reports success with the CLI’s last line and passes the server’s environment', async () => {
    const root = fakeCheckout(RECORDING_CLI);
    const lines: string[] = [];
    const result = await runCli(cliInvocation(serverSpec(root), backupArgs('/tmp/out.tar')), {
      onOutput: (line) => lines.push(line),
    });
    expect(result).toMatchObject({ ok: true, exitCode: 0, message: 'Backup written to /tmp/out.tar' });
    expect(lines).toEqual(['progress: copying', 'Backup written to /tmp/out.tar']);
    const call = JSON.parse(fs.readFileSync(path.join(root, 'call.json'), 'utf8')) as Record<string, unknown>;
    expect(call).toEqual({
      argv: ['backup', '--out', '/tmp/out.tar'],
      dataDir: '/srv/stellwerk',
      port: '8181',
      asNode: null,
    });
  });

  it('reports a failure with its exit code and the one-line reason from stderr', async () => {
    const root = fakeCheckout(RECORDING_CLI);
    const result = await runCli(cliInvocation(serverSpec(root), restoreArgs('/tmp/in.tar')));
    expect(result.ok).toBe(false);
    expect(result.exitCode).toBe(3);
    expect(result.message).toBe('restore: checksum mismatch in db/base.tar, nothing was changed');
    expect(result.output).toContain('checking the archive');
  });

  it('reports a CLI that is missing or hangs instead of waiting forever', async () => {
    const missing = await runCli({
      command: path.join(os.tmpdir(), 'no-such-node'),
      args: [],
      env: {},
      cwd: os.tmpdir(),
    });
    expect(missing).toMatchObject({ ok: false, exitCode: null });
    expect(missing.message).toMatch(/could not be started/);

    const root = fakeCheckout('setInterval(() => {}, 1000);');
    const hung = await runCli(cliInvocation(serverSpec(root), ['backup']), { timeoutMs: 300 });
    expect(hung).toMatchObject({
      ok: false,
      exitCode: null,
      message: 'stellwerk did not finish within 300 ms',
    });
  });
});
