import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode, TOTP_PERIOD_SECONDS } from '../../server/src/auth/totp.js';
import { VERSION } from '../../server/src/version.js';
import { createTestDatabase } from '../integration/support/database.js';
import {
  killSpawnedServers,
  REPO_ROOT,
  startServer,
  tempDataDir,
  type ServerProcess,
} from '../integration/support/server-process.js';
import { watchPageProblems } from './support/page-problems.js';

/** Debian's Chromium (never a downloaded one); see the README's test section. */
export const CHROMIUM = process.env.STELLWERK_CHROMIUM ?? '/usr/bin/chromium';
const SCREENSHOT_DIR = process.env.STELLWERK_SCREENSHOT_DIR ?? path.join(os.tmpdir(), 'stellwerk-e2e');

const EMAIL = 'ada@stellwerk.test';
const PASSWORD = 'analytical engine 1843';

/** Builds the console from the sources into a temp folder, so the test sees the code under test. */
function buildConsole(outDir: string): void {
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
      env: { ...process.env, STELLWERK_CONSOLE_OUT: outDir },
      encoding: 'utf8',
    },
  );
  if (result.status !== 0) throw new Error(`console build failed:\n${result.stdout}${result.stderr}`);
}

/** A code for a time step after `usedAt`'s: each code is good once, and the server accepts one step of drift. */
const nextCode = (secret: string, usedAt: Date) =>
  totpCode(secret, new Date(usedAt.getTime() + TOTP_PERIOD_SECONDS * 1000));

describe('console end to end (Chromium)', () => {
  let server: ServerProcess;
  let context: BrowserContext;
  let page: Page;
  let dropDatabase: () => Promise<void>;
  const temp: string[] = [];
  const foreignRequests: string[] = [];

  beforeAll(async () => {
    const consoleDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-console-'));
    const dataDir = await tempDataDir('stellwerk-e2e-data-');
    const profile = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-chromium-'));
    temp.push(consoleDir, dataDir, profile);
    await fs.mkdir(SCREENSHOT_DIR, { recursive: true });
    const db = await createTestDatabase();
    dropDatabase = db.drop;
    const [, started] = await Promise.all([
      Promise.resolve().then(() => buildConsole(consoleDir)),
      startServer({ DATABASE_URL: db.url, STELLWERK_DATA_DIR: dataDir, STELLWERK_CONSOLE_DIR: consoleDir }),
    ]);
    server = started;
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
      viewport: { width: 1280, height: 800 },
      locale: 'en-US',
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (!['127.0.0.1', 'localhost'].includes(url.hostname) && !['data:', 'blob:'].includes(url.protocol))
        foreignRequests.push(request.url());
    });
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await server?.stop();
    killSpawnedServers();
    await dropDatabase?.();
    for (const dir of temp) await fs.rm(dir, { recursive: true, force: true });
  });

  const shot = (name: string) =>
    page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });

  it('onboarding → login → 2FA enrolment → logout → login with 2FA → home', async () => {
    const setupToken = /setup token: ([\w-]+)/.exec(server.output())?.[1];
    expect(setupToken, 'the server prints the onboarding token').toBeTruthy();

    // A mistyped link: the token's error is said once, at the token field (no notice, no code).
    await page.goto(`${server.baseUrl}/onboarding?token=not-${setupToken}`);
    const body = page.locator('body');
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repeat password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create administrator' }).click();
    const tokenHint = page.locator('#setup-token-hint.field-invalid');
    await expect.poll(() => tokenHint.textContent()).toBe('The setup token is invalid.');
    expect(await page.getByLabel('Setup token').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(':focus').getAttribute('id')).toBe('setup-token');
    expect(await page.getByTestId('error').count()).toBe(0);
    expect((await body.innerText()).match(/setup token is (in|not )valid/gi)).toHaveLength(1);
    expect(await body.innerText()).not.toContain('INVALID_SETUP_TOKEN');
    await shot('01a-onboarding-wrong-token');

    // A password the server refuses: said once, at the password field.
    const tooLong = 'x'.repeat(1025);
    await page.getByLabel('Password', { exact: true }).fill(tooLong);
    await page.getByLabel('Repeat password').fill(tooLong);
    await page.getByRole('button', { name: 'Create administrator' }).click();
    const passwordHint = page.locator('#password-hint.field-invalid');
    await passwordHint.waitFor();
    const passwordText = (await passwordHint.textContent())!.trim();
    expect(passwordText).not.toBe('');
    expect(await page.getByTestId('error').count()).toBe(0);
    expect((await body.innerText()).split(passwordText)).toHaveLength(2);
    expect(await page.locator('.field-invalid').count()).toBe(1);

    // Onboarding: the printed link carries the token, the page offers it prefilled.
    await page.goto(`${server.baseUrl}/onboarding?token=${setupToken}`);
    await expect.poll(() => page.getByLabel('Setup token').inputValue()).toBe(setupToken);
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Repeat password').fill(PASSWORD);
    await shot('01-onboarding');
    await page.getByRole('button', { name: 'Create administrator' }).click();

    // Login: the spent token is gone from the address bar (and from the history entry).
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    expect(page.url()).not.toContain(setupToken!);
    expect(new URL(page.url()).searchParams.has('token')).toBe(false);
    // …and so is the onboarding path: a reload or bookmark opens the console.
    expect(new URL(page.url()).pathname).toBe('/');

    // A first visit before login: the console asks for the session without a failed request.
    const firstVisit = watchPageProblems(page);
    await page.goto(server.baseUrl);
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await page.waitForLoadState('networkidle');
    firstVisit.stop();
    expect(firstVisit.problems).toEqual([]);

    // The e-mail is prefilled after onboarding; a wrong password reads as one sentence, as a product
    // says it: no "Something went wrong" heading, no server wording, no code.
    expect(await page.getByLabel('E-mail').inputValue()).toBe(EMAIL);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect
      .poll(async () => (await page.getByTestId('error').innerText()).trim())
      .toBe('Invalid e-mail or password.');
    expect(await page.getByTestId('error').getAttribute('data-code')).toBe('INVALID_CREDENTIALS');
    expect(await page.getByTestId('error').getAttribute('role')).toBe('alert');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByTestId('greeting').waitFor();
    expect(await page.getByTestId('two-factor-state').textContent()).toMatch(/Off/);

    // 2FA enrolment from the shown secret.
    await page.getByRole('link', { name: 'Set up two-factor authentication' }).click();
    const secret = (await page.getByTestId('totp-secret').textContent())!.trim();
    expect(secret).toMatch(/^[A-Z2-7]+$/);
    expect(await page.getByRole('img', { name: /QR code/ }).getAttribute('src')).toMatch(
      /^data:image\/png;base64,/,
    );
    await shot('02-two-factor-setup');
    const activatedAt = new Date();
    await page.getByLabel('Code from the app').fill(await totpCode(secret, activatedAt));
    await page.getByRole('button', { name: 'Activate' }).click();
    const codes = page.getByTestId('recovery-codes').locator('li');
    await codes.first().waitFor();
    expect(await codes.count()).toBe(10);
    await shot('03-recovery-codes');
    await page.getByLabel('I have stored my recovery codes').check();
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => page.getByTestId('two-factor-state').textContent()).toMatch(/On/);

    // Logout, then login with the second factor.
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByLabel('Authentication code').fill(await nextCode(secret, activatedAt));
    await shot('04-login-code');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByTestId('greeting').waitFor();
    expect(await page.getByTestId('greeting').textContent()).toBe('Hello, Ada Lovelace');
    expect(await page.getByTestId('user-email').textContent()).toBe(EMAIL);
    // The profile names permissions as the role editor does, not by their API keys.
    expect(await page.getByTestId('profile-permissions').locator('li').allTextContents()).toEqual([
      'Everything: Manage',
    ]);
    // The version of the package the console was built from, as /xapi/v1/health reports it.
    expect(await page.locator('.app-version').textContent()).toBe(`Stellwerk ${VERSION}`);

    // German and the dark theme, remembered across a reload.
    await page.getByLabel('Language').selectOption('de');
    await page.getByTestId('theme-toggle').click();
    await page.reload();
    await page.getByTestId('greeting').waitFor();
    expect(await page.getByTestId('greeting').textContent()).toBe('Hallo, Ada Lovelace');
    expect(await page.getByTestId('profile-permissions').textContent()).toContain('Alles: Verwalten');
    expect(await page.locator('html').getAttribute('data-theme')).toBe('dark');
    await shot('05-home-dark-de');

    expect(foreignRequests, 'no request leaves loopback').toEqual([]);
  });
});
