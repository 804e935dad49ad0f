import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { createTestDatabase } from '../../integration/support/database.js';
import { freePort } from '../../integration/support/mosquitto.js';
import {
  killSpawnedServers,
  REPO_ROOT,
  startServer,
  tempDataDir,
  type ServerProcess,
} from '../../integration/support/server-process.js';

/** Debian's Chromium (never a downloaded one); see the README's test section. */
export const CHROMIUM = process.env.STELLWERK_CHROMIUM ?? '/usr/bin/chromium';
export const SCREENSHOT_DIR = process.env.STELLWERK_SCREENSHOT_DIR ?? path.join(os.tmpdir(), 'stellwerk-e2e');

/**
 * Builds the console from the sources into `outDir`, so the test sees the code under test; without
 * the build-time .br/.gz copies unless `precompressed` (they cost about 15 s of CPU per build).
 */
export function buildConsole(outDir: string, precompressed = false): void {
  const vite = path.join(
    path.dirname(createRequire(import.meta.url).resolve('vite/package.json')),
    'bin',
    'vite.js',
  );
  const result = spawnSync(
    process.execPath,
    [vite, 'build', '--config', 'renderer/vite.config.ts', '--logLevel', 'warn'],
    {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        STELLWERK_CONSOLE_OUT: outDir,
        STELLWERK_CONSOLE_PRECOMPRESS: precompressed ? 'on' : 'off',
      },
      encoding: 'utf8',
    },
  );
  if (result.status !== 0) throw new Error(`console build failed:\n${result.stdout}${result.stderr}`);
}

export interface ConsoleHarness {
  server: ServerProcess;
  /** The server's database, for tests that seed at a scale the API would take minutes for. */
  databaseUrl: string;
  /** The embedded MQTT broker's port. */
  mqttPort: number;
  context: BrowserContext;
  page: Page;
  /** Requests that left loopback (a test expects none). */
  foreignRequests: string[];
  shot(name: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * A built console, a server process on fixed free ports (so STELLWERK_PUBLIC_URL is the page's own
 * origin, which the live WebSocket's cookie check requires) and Chromium. `env` adds server settings,
 * e.g. STELLWERK_ADMIN_EMAIL / STELLWERK_ADMIN_PASSWORD to skip onboarding; `chromiumArgs` adds
 * browser switches (the acceptance test's recording proxy).
 */
export async function startConsoleHarness(
  env: Record<string, string> = {},
  options: { chromiumArgs?: string[]; precompressed?: boolean } = {},
): Promise<ConsoleHarness> {
  const consoleDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-console-'));
  const dataDir = await tempDataDir('stellwerk-e2e-data-');
  const profile = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-chromium-'));
  await fs.mkdir(SCREENSHOT_DIR, { recursive: true });
  const db = await createTestDatabase();
  const httpPort = await freePort();
  let mqttPort = await freePort();
  while (mqttPort === httpPort) mqttPort = await freePort();
  const [, server] = await Promise.all([
    // The run's build (console-build.global.ts) is copied; only the precompressed variant is built here.
    options.precompressed
      ? Promise.resolve().then(() => buildConsole(consoleDir, true))
      : fs.cp(inject('builtConsoleDir'), consoleDir, { recursive: true }),
    // The console build runs beside the server's start: on a busy machine both together take minutes.
    startServer(
      {
        DATABASE_URL: db.url,
        STELLWERK_DATA_DIR: dataDir,
        STELLWERK_CONSOLE_DIR: consoleDir,
        STELLWERK_HTTP_PORT: String(httpPort),
        STELLWERK_MQTT_PORT: String(mqttPort),
        STELLWERK_PUBLIC_URL: `http://127.0.0.1:${httpPort}`,
        ...env,
      },
      180_000,
    ),
  ]);
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      ...(options.chromiumArgs ?? []),
    ],
    viewport: { width: 1280, height: 800 },
    locale: 'en-US',
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const foreignRequests: string[] = [];
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (!['127.0.0.1', 'localhost'].includes(url.hostname) && !['data:', 'blob:'].includes(url.protocol))
      foreignRequests.push(request.url());
  });
  return {
    server,
    databaseUrl: db.url,
    mqttPort,
    context,
    page,
    foreignRequests,
    shot: async (name) => {
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
    },
    close: async () => {
      await context.close();
      await server.stop();
      killSpawnedServers();
      await db.drop();
      for (const dir of [consoleDir, dataDir, profile]) await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
