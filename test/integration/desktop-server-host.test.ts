import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  attachOrStart,
  desktopSettings,
  probeHealth,
  type DesktopSettings,
  type ServerHandle,
} from '../../electron/server-host.js';
import type { HealthReport } from '../../server/src/health/health.service.js';
import { createTestDatabase } from './support/database.js';
import { freePort } from './support/mosquitto.js';
import {
  isAlive,
  killSpawnedServers,
  portClosed,
  processesMentioning,
  REPO_ROOT,
  serverEnv,
  startServer,
  tempDataDir,
} from './support/server-process.js';

/**
 * The desktop shell's attach-or-start (electron/server-host.ts) against the
 * real Stellwerk server, not a stand-in. The shell's own unit tests (electron/server-host.test.ts)
 * cover the failure paths with small scripts; here the child is `server/src/main.ts` itself.
 *
 * The started server runs from the sources through tsx (like every other server-process test),
 * not from `dist/server/src/main.js`, which the shell runs in a packaged app: the tests never
 * depend on a build being present or fresh. Everything else (URL, port, loopback host, the
 * environment handed down, health polling, SIGTERM on stop) is the shell's code unchanged.
 */
const cleanups: Array<() => Promise<unknown>> = [];
let consoleDir: string;
const CONSOLE_MARKER = 'stellwerk-desktop-test-console';

beforeAll(async () => {
  // A stand-in for the built console, so `/` answers without building renderer/ in this test.
  consoleDir = await tempDataDir('stellwerk-desktop-console-');
  await fs.writeFile(
    path.join(consoleDir, 'index.html'),
    `<!doctype html><title>Stellwerk</title><p id="${CONSOLE_MARKER}">console</p>`,
  );
  cleanups.push(() => fs.rm(consoleDir, { recursive: true, force: true }));
});

afterAll(async () => {
  killSpawnedServers();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The desktop's settings for this machine, as main.ts computes them in a development checkout. */
function settingsFor(env: NodeJS.ProcessEnv): DesktopSettings {
  return desktopSettings({
    env,
    isPackaged: false,
    resourcesPath: '',
    appPath: REPO_ROOT,
    platform: process.platform,
  });
}

async function healthReport(url: string): Promise<HealthReport> {
  const response = await fetch(`${url}/xapi/v1/health`);
  expect(response.status).toBe(200);
  return (await response.json()) as HealthReport;
}

describe('desktop attach-or-start with the real server', () => {
  it('attaches to a running Stellwerk found by its health URL and spawns nothing', async () => {
    const db = await createTestDatabase();
    cleanups.push(db.drop);
    const dataDir = await tempDataDir('stellwerk-desktop-attach-');
    cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }));
    const running = await startServer({ DATABASE_URL: db.url, STELLWERK_DATA_DIR: dataDir });
    cleanups.push(() => running.stop());

    const settings = settingsFor({ STELLWERK_HTTP_PORT: String(running.httpPort) });
    expect(settings.url).toBe(running.baseUrl);
    // Were anything spawned, this runtime would fail and attachOrStart would reject.
    const spawn = { ...settings.spawn!, command: path.join(dataDir, 'no-such-runtime') };
    const handle = await attachOrStart({ settings: { ...settings, spawn }, startTimeoutMs: 5_000 });
    expect(handle).toMatchObject({ url: running.baseUrl, mode: 'attached', pid: undefined });

    // Quitting the app leaves the service running.
    await handle.stop();
    expect(isAlive(running.pid)).toBe(true);
    expect(await probeHealth(running.baseUrl)).toBe(true);
    expect((await healthReport(running.baseUrl)).status).toBe('ok');
  }, 120_000);

  it('starts the server with its embedded PostgreSQL, shows the console at /, and stops both on quit', async () => {
    const dataDir = await tempDataDir('stellwerk-desktop-start-');
    cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }));
    const httpPort = await freePort();
    let mqttPort = await freePort();
    while (mqttPort === httpPort) mqttPort = await freePort();
    // The desktop default: no DATABASE_URL, so the server runs its embedded PostgreSQL in the data dir.
    const { STELLWERK_HTTP_HOST: _host, ...env } = serverEnv({
      STELLWERK_HTTP_PORT: String(httpPort),
      STELLWERK_MQTT_PORT: String(mqttPort),
      STELLWERK_DATA_DIR: dataDir,
      STELLWERK_PG_PORT: '0',
      STELLWERK_CONSOLE_DIR: consoleDir,
      STELLWERK_NODE_NAME: 'desktop',
      STELLWERK_NODE: process.execPath,
    });
    const settings = settingsFor(env);
    expect(settings.url).toBe(`http://127.0.0.1:${httpPort}`);
    expect(settings.spawn).toMatchObject({
      command: process.execPath,
      args: [
        '--max-semi-space-size=64',
        '--v8-pool-size=0',
        path.join(REPO_ROOT, 'dist', 'server', 'src', 'main.js'),
      ],
      cwd: REPO_ROOT,
    });
    // The shell chose loopback itself (the test's environment did not say).
    expect(settings.spawn!.env.STELLWERK_HTTP_HOST).toBe('127.0.0.1');
    const fromSources = { ...settings.spawn!, args: ['--import', 'tsx', 'server/src/main.ts'] };

    const output: string[] = [];
    const began = Date.now();
    let handle: ServerHandle | undefined = await attachOrStart({
      settings: { ...settings, spawn: fromSources },
      startTimeoutMs: 90_000,
      stopGraceMs: 20_000,
      onOutput: (line) => output.push(line),
    });
    cleanups.push(() => handle?.stop() ?? Promise.resolve());
    const startedInMs = Date.now() - began;
    expect(handle.mode).toBe('started');
    const serverPid = handle.pid!;
    expect(isAlive(serverPid)).toBe(true);

    // The real server answers: its health names this process, and the console is served at /.
    const report = await healthReport(settings.url);
    expect(report.database.status).toBe('ok');
    expect(report.nodes.find((node) => node.name === 'desktop')).toMatchObject({
      status: 'ok',
      pid: serverPid,
    });
    const page = await fetch(`${settings.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain(CONSOLE_MARKER);

    // Its own PostgreSQL, in the data directory the desktop handed down.
    const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
    const postmaster = Number((await fs.readFile(pidFile, 'utf8')).split('\n')[0]);
    expect(isAlive(postmaster)).toBe(true);
    expect((await processesMentioning(dataDir)).length).toBeGreaterThan(0);

    // A second launch of the app attaches to the server the first one started.
    const second = await attachOrStart({ settings: { ...settings, spawn: fromSources } });
    expect(second).toMatchObject({ mode: 'attached', pid: undefined });

    // Quit: SIGTERM, the server stops its PostgreSQL cleanly, nothing is left behind.
    const stopBegan = Date.now();
    await handle.stop();
    const stoppedInMs = Date.now() - stopBegan;
    handle = undefined;
    expect(isAlive(serverPid)).toBe(false);
    expect(isAlive(postmaster)).toBe(false);
    expect(await processesMentioning(dataDir)).toEqual([]);
    await expect(fs.access(pidFile)).rejects.toThrow(); // removed by a clean PostgreSQL shutdown
    expect(await portClosed(httpPort)).toBe(true);
    expect(await portClosed(mqttPort)).toBe(true);
    const log = output.join('\n');
    expect(log).toContain('"part":"database","msg":"stopped"');
    expect(log).not.toContain('failed to stop cleanly');
    console.info(`desktop start with embedded PostgreSQL: ${startedInMs} ms, stop: ${stoppedInMs} ms`);
  }, 150_000);
});
