import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

/**
 * The installed server package on this machine, as the package round-trip test and the
 * time-to-first-value script use it: build the deb, install and remove it with dpkg, and run the
 * systemd unit's ExecStart as its user where systemd is not PID 1 (containers, CI).
 */

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DATA_DIR = '/var/lib/stellwerk';
export const UNIT_FILE = '/usr/lib/systemd/system/stellwerk.service';
export const SERVICE_USER = 'stellwerk';

export interface CommandResult {
  status: number | null;
  output: string;
}

/** Runs a command to its end; stdout and stderr together. */
export function runCommand(command: string, args: string[], options: { cwd?: string } = {}): CommandResult {
  const result = spawnSync(command, args, {
    encoding: 'utf8',
    cwd: options.cwd,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) return { status: null, output: `${command}: ${result.error.message}` };
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** Like runCommand, but throws with the output when the command fails. */
export function mustRun(command: string, args: string[], options: { cwd?: string } = {}): string {
  const result = runCommand(command, args, options);
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status}:\n${result.output}`);
  }
  return result.output;
}

/**
 * `npm run package` for the deb only, uncompressed (the test installs it at once; compressing 260 MB
 * would take most of a minute). Reuses dist/ when it is current. Returns the deb's path.
 */
export function buildDeb(out: string, version?: string): string {
  fs.mkdirSync(out, { recursive: true });
  const args = ['scripts/package.mjs', '--formats', 'deb', '--compression', 'none', '--out', out];
  if (version) args.push('--version', version);
  mustRun(process.execPath, args, { cwd: REPO_ROOT });
  const debs = fs.readdirSync(out).filter((file) => file.endsWith('.deb'));
  if (debs.length !== 1) throw new Error(`expected one .deb in ${out}, found: ${debs.join(', ') || 'none'}`);
  return path.join(out, debs[0]!);
}

/** The installed version of the stellwerk package, or undefined. */
export function installedVersion(): string | undefined {
  const result = runCommand('dpkg-query', ['-W', '-f', '${db:Status-Status} ${Version}', 'stellwerk']);
  if (result.status !== 0) return undefined;
  const [status, version] = result.output.trim().split(' ');
  return status === 'installed' ? version : undefined;
}

/** Whether dpkg knows the package at all (installed, or removed with its configuration kept). */
export function packageKnown(): boolean {
  const result = runCommand('dpkg-query', ['-W', '-f', '${db:Status-Status}', 'stellwerk']);
  return result.status === 0 && result.output.trim() !== 'not-installed' && result.output.trim() !== '';
}

/** The unit's `Environment=` assignments (the package's unit uses plain KEY=value, without quotes). */
export function unitEnvironment(unit: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of unit.split('\n')) {
    const match = /^Environment=([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match) env[match[1]!] = match[2]!;
  }
  return env;
}

/** A single-valued `Key=` setting of the unit's text. */
export function unitSetting(unit: string, key: string): string {
  const match = new RegExp(`^${key}=(.+)$`, 'm').exec(unit);
  if (!match) throw new Error(`the unit has no ${key}=`);
  return match[1]!.trim();
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface InstalledServer {
  child: ChildProcess;
  baseUrl: string;
  mqttPort: number;
  /** Everything the server wrote so far. */
  output(): string;
  /** The one-time setup token the server printed, if it printed one. */
  setupToken(): string | undefined;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * Starts the installed unit's ExecStart the way systemd would: as its User and Group (setpriv, which
 * execs, so signals reach the server), in its WorkingDirectory, with only its Environment= lines plus
 * what systemd itself sets (PATH, HOME, USER) and `extraEnv` (free ports for a shared machine).
 */
export async function startInstalledUnit(
  extraEnv: Record<string, string>,
  timeoutMs = 120_000,
): Promise<InstalledServer> {
  const unit = fs.readFileSync(UNIT_FILE, 'utf8');
  const user = unitSetting(unit, 'User');
  const group = unitSetting(unit, 'Group');
  const execStart = unitSetting(unit, 'ExecStart').split(/\s+/);
  const mqttPort = Number(extraEnv.STELLWERK_MQTT_PORT ?? (await freePort()));
  const env = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: DATA_DIR,
    USER: user,
    LOGNAME: user,
    ...unitEnvironment(unit),
    STELLWERK_HTTP_HOST: '127.0.0.1',
    STELLWERK_HTTP_PORT: '0',
    STELLWERK_MQTT_HOST: '127.0.0.1',
    STELLWERK_MQTT_PORT: String(mqttPort),
    STELLWERK_PG_PORT: '0',
    STELLWERK_LOG_LEVEL: 'info',
    ...extraEnv,
  };
  const child = spawn(
    'setpriv',
    [
      `--reuid=${user}`,
      `--regid=${group}`,
      '--init-groups',
      '--',
      'env',
      '-i',
      ...envArgs(env),
      ...execStart,
    ],
    { cwd: unitSetting(unit, 'WorkingDirectory'), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let text = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      exitCode = code;
      resolve(code);
    }),
  );
  const stop = async (graceMs = 60_000) => {
    if (exitCode !== undefined) return exitCode;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const port = readyPort(text);
    if (port !== undefined) {
      return {
        child,
        baseUrl: `http://127.0.0.1:${port}`,
        mqttPort,
        output: () => text,
        setupToken: () => /setup token: ([A-Za-z0-9_-]+)/.exec(text)?.[1],
        stop,
      };
    }
    if (exitCode !== undefined)
      throw new Error(`the installed server exited (${exitCode}) before it was ready:\n${text}`);
    await sleep(100);
  }
  await stop(5_000);
  throw new Error(`the installed server was not ready within ${timeoutMs} ms:\n${text}`);
}

function envArgs(env: Record<string, string>): string[] {
  return Object.entries(env).map(([key, value]) => `${key}=${value}`);
}

/** The HTTP port from the server's JSON "Stellwerk is ready" line. */
function readyPort(text: string): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.includes('Stellwerk is ready')) continue;
    try {
      const parsed = JSON.parse(line) as { httpPort?: unknown };
      if (typeof parsed.httpPort === 'number') return parsed.httpPort;
    } catch {
      // a human-readable line: the port is in the URL
    }
    const match = /Stellwerk is ready on https?:\/\/[^:\s]+:(\d+)/.exec(line);
    if (match) return Number(match[1]);
  }
  return undefined;
}

/** The one migration the newer build of repackNewer adds. */
export const UPGRADE_PROBE_MIGRATION = 'Migration29991231000000_upgrade_probe';

/**
 * A newer build of `deb` for the upgrade test: the same files with a higher version and one more
 * migration, a no-op, so the newer server finds the database of an older version (as a real upgrade
 * with schema changes does) and backs it up before migrating.
 */
export function repackNewer(deb: string, out: string, version: string): string {
  const tree = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-newer-'));
  try {
    mustRun('dpkg-deb', ['--raw-extract', deb, tree]);
    const control = path.join(tree, 'DEBIAN', 'control');
    fs.writeFileSync(
      control,
      fs.readFileSync(control, 'utf8').replace(/^Version: .*$/m, `Version: ${version}`),
    );
    const pkgFile = path.join(tree, 'opt/stellwerk/package.json');
    const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as { version: string };
    fs.writeFileSync(pkgFile, `${JSON.stringify({ ...pkg, version }, null, 2)}\n`);
    const name = UPGRADE_PROBE_MIGRATION;
    fs.writeFileSync(
      path.join(tree, 'opt/stellwerk/dist/migrations', `${name}.js`),
      [
        "import { Migration } from '@mikro-orm/migrations';",
        `export class ${name} extends Migration {`,
        "  async up() { this.addSql('select 1'); }",
        '}',
        '',
      ].join('\n'),
    );
    const file = path.join(out, `stellwerk_${version}_${path.basename(deb).split('_').at(-1)}`);
    mustRun('dpkg-deb', ['--root-owner-group', '-Znone', '--build', tree, file]);
    return file;
  } finally {
    fs.rmSync(tree, { recursive: true, force: true });
  }
}

/** fetch against the server's JSON API; throws with the body on a non-2xx answer. */
export async function api<T>(
  base: string,
  url: string,
  init: { token?: string; body?: unknown; method?: string } = {},
): Promise<T> {
  const response = await fetch(`${base}${url}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      'x-requested-with': 'stellwerk',
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? 'GET/POST'} ${url}: ${response.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}
