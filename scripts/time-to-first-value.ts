import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, promisify } from 'node:util';
import { chromium } from 'playwright-core';
import {
  api,
  buildDeb,
  mustRun,
  packageKnown,
  runCommand,
  startInstalledUnit,
  type InstalledServer,
} from './package/installed-server.js';

/**
 * Times an IT admin's first use of the server package on this machine, step by step, as
 * docs/getting-started.md describes it: install the deb, start the service, create the first admin
 * from the printed setup token, create a connector and a device, publish a value with mosquitto_pub,
 * and see it on a twin with a location, and the twin on the console's map (Chromium).
 *
 *   npx tsx scripts/time-to-first-value.ts [--deb release/stellwerk_….deb] [--keep]
 *
 * Without --deb it builds one first (not counted). Needs root; refuses when a stellwerk package is
 * already installed. Removes and purges the package at the end unless --keep. The figures are the
 * machine's time: what an admin types and reads comes on top.
 */

const run = promisify(execFile);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ADMIN = { email: 'it.admin@example.com', password: 'first value admin password', name: 'IT Admin' };

const { values } = parseArgs({
  options: { deb: { type: 'string' }, keep: { type: 'boolean', default: false } },
});

if (process.getuid?.() !== 0) fail('run as root: the script installs the package with dpkg');
if (packageKnown())
  fail('a stellwerk package is already on this machine: remove it (dpkg -P stellwerk) first');

const steps: { step: string; ms: number }[] = [];
async function timed<T>(step: string, action: () => Promise<T> | T): Promise<T> {
  const began = performance.now();
  const result = await action();
  const ms = performance.now() - began;
  steps.push({ step, ms });
  console.log(`${step.padEnd(58)} ${(ms / 1000).toFixed(1).padStart(6)} s`);
  return result;
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-first-value-'));
let server: InstalledServer | undefined;
try {
  const deb = values.deb ? path.resolve(values.deb) : buildDeb(work);
  console.log(`package: ${deb} (${(fs.statSync(deb).size / 1024 / 1024).toFixed(1)} MB)\n`);

  await timed('1. install the package (dpkg -i)', () => mustRun('dpkg', ['--install', deb]));
  // Systemd is not PID 1 on every machine this runs on: the unit's ExecStart as its user instead.
  server = await timed('2. start the service until it answers', () => startInstalledUnit({}));
  const { baseUrl, mqttPort } = server;
  const setupToken = server.setupToken();
  if (!setupToken) throw new Error(`the server printed no setup token:\n${server.output()}`);

  const token = await timed('3. create the admin from the setup token, log in', async () => {
    await api(baseUrl, '/api/v1/onboarding', { body: { setupToken, ...ADMIN } });
    return (await api<{ token: string }>(baseUrl, '/xapi/v1/auth/login', { body: ADMIN })).token;
  });

  const setup = await timed('4. create a connector, a device and a twin with a location', async () => {
    const connector = await api<{ id: string; credentials: { username: string; password: string } }>(
      baseUrl,
      '/xapi/v1/connectors',
      { token, body: { type: 'mqtt-broker', title: 'Boiler house gateway' } },
    );
    const driver = await api<{ id: string }>(baseUrl, '/xapi/v1/device-drivers', {
      token,
      body: { title: 'Thermometer (JSON)', parser: { type: 'json' } },
    });
    await api(baseUrl, '/xapi/v1/virtual-devices', {
      token,
      body: {
        device_id: 'boiler-1',
        title: 'Boiler 1',
        connectorId: connector.id,
        deviceDriverId: driver.id,
        referenceId: 'BOILER-1',
      },
    });
    const twin = await api<{ id: string }>(baseUrl, '/xapi/v1/digital-twins', {
      token,
      body: { title: 'Boiler house', referenceId: 'BOILER-1', latitude: 48.137, longitude: 11.575 },
    });
    const state = await api<{ id: string }>(baseUrl, `/xapi/v1/digital-twins/${twin.id}/states`, {
      token,
      body: { key: 'temperature', unit: '°C', source: { type: 'dynamic-routing', stateKey: 'temperature' } },
    });
    return { connector, twinId: twin.id, stateId: state.id };
  });

  await timed('5. mosquitto_pub a value until the twin shows it', async () => {
    const { username, password } = setup.connector.credentials;
    await run('mosquitto_pub', [
      ...['-h', '127.0.0.1', '-p', String(mqttPort), '-u', username, '-P', password, '-q', '1'],
      ...['-t', `connectors/${setup.connector.id}/devices/boiler-1/up`, '-m', '{"temperature":64.5}'],
    ]);
    for (let attempt = 0; attempt < 300; attempt++) {
      const state = await api<{ value: unknown }>(baseUrl, `/xapi/v1/states/${setup.stateId}`, { token });
      if (state.value === 64.5) return;
      await sleep(100);
    }
    throw new Error('the published value did not reach the twin within 30 s');
  });

  await timed("6. log in to the console, see the twin's marker on the map", () =>
    mapShowsTwin(baseUrl, setup.twinId),
  );

  const total = steps.reduce((sum, { ms }) => sum + ms, 0);
  console.log(
    `${'time to first value (machine time)'.padEnd(58)} ${(total / 1000).toFixed(1).padStart(6)} s`,
  );
  console.log(
    `\nmachine: ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), load ${os.loadavg()[0]?.toFixed(2)}`,
  );
} catch (error) {
  console.error(`time-to-first-value: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  await server?.stop(30_000);
  if (!values.keep && packageKnown()) runCommand('dpkg', ['--purge', 'stellwerk']);
  fs.rmSync(work, { recursive: true, force: true });
}

/** Chromium logs in through the console's login page and opens the map; resolves once the marker is drawn. */
async function mapShowsTwin(baseUrl: string, twinId: string): Promise<void> {
  const profile = fs.mkdtempSync(path.join(work, 'chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    viewport: { width: 1280, height: 800 },
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(baseUrl);
    await page.getByLabel('E-mail').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByTestId('greeting').waitFor({ timeout: 30_000 });
    await page
      .getByRole('navigation', { name: 'Main navigation' })
      .getByRole('link', { name: 'Map' })
      .click();
    await page.locator(`[data-testid="twin-marker"][data-twin-id="${twinId}"]`).waitFor({ timeout: 30_000 });
  } finally {
    await context.close();
  }
}

function fail(message: string): never {
  console.error(`time-to-first-value: ${message}`);
  process.exit(1);
}
