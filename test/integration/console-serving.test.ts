import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const INDEX = '<!doctype html><title>Stellwerk</title><div id="app"></div>';

describe('the web console at /', () => {
  let built: TestApp;
  let missing: TestApp;
  let consoleDir: string;

  beforeAll(async () => {
    consoleDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-console-'));
    await fs.mkdir(path.join(consoleDir, 'assets'));
    await fs.writeFile(path.join(consoleDir, 'index.html'), INDEX);
    await fs.writeFile(path.join(consoleDir, 'assets', 'index-abc123.js'), 'console.log(1);');
    await fs.writeFile(path.join(consoleDir, '..', `${path.basename(consoleDir)}.secret`), 'not served');
    await fs.symlink(`../../${path.basename(consoleDir)}.secret`, path.join(consoleDir, 'assets', 'leak.js'));
    [built, missing] = await Promise.all([
      createTestApp({ env: { STELLWERK_CONSOLE_DIR: consoleDir, STELLWERK_API_TIMEOUT_MS: '12000' } }),
      createTestApp({ env: { STELLWERK_CONSOLE_DIR: path.join(consoleDir, 'nothing-here') } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([built?.close(), missing?.close()]);
    await fs.rm(consoleDir, { recursive: true, force: true });
    await fs.rm(`${consoleDir}.secret`, { force: true });
  });

  it('serves the page at / and at every console path, never cached, with a strict CSP', async () => {
    for (const url of ['/', '/onboarding?token=abc', '/devices/123']) {
      const response = await built.app.inject({ url });
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.body).toBe(INDEX);
      expect(response.headers['cache-control']).toBe('no-cache');
      expect(response.headers['content-security-policy']).toContain("script-src 'self'");
    }
  });

  it('serves hashed assets as immutable and answers a missing file with the error body', async () => {
    const asset = await built.app.inject({ url: '/assets/index-abc123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const absent = await built.app.inject({ url: '/assets/gone.js' });
    expect(absent.statusCode).toBe(404);
    expect(absent.json<{ error: { code: string } }>().error.code).toBe('NOT_FOUND');
    const outside = await built.app.inject({ url: '/..%2f..%2fetc%2fpasswd.txt' });
    expect(outside.statusCode).toBeGreaterThanOrEqual(400);
    expect(outside.statusCode).toBeLessThan(500);
  });

  it('serves only regular files inside its folder: a symlink out of it is a 404', async () => {
    const leak = await built.app.inject({ url: '/assets/leak.js' });
    expect(leak.statusCode).toBe(404);
    expect(leak.body).not.toContain('not served');
    const asset = await built.app.inject({ url: '/assets/index-abc123.js' });
    // nosniff is set: a module script needs a JavaScript type.
    expect(asset.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(asset.headers['x-content-type-options']).toBe('nosniff');
    expect(asset.body).toBe('console.log(1);');
  });

  it('leaves the APIs alone: unknown API paths are 404 with the error body, /health answers', async () => {
    for (const url of ['/xapi/v1/nope', '/api/v1/nope', '/hub/api/nope', '/metrics/x', '/mqtt/x']) {
      const response = await built.app.inject({ url });
      expect(response.statusCode, url).toBe(404);
      expect(response.json<{ error: { code: string } }>().error.code).toBe('NOT_FOUND');
    }
    expect((await built.app.inject({ url: '/health' })).json()).toEqual({ status: 'ok' });
    expect((await built.app.inject({ url: '/xapi/v1/openapi.json' })).statusCode).toBe(200);
  });

  it('says how to build the console when it is not built', async () => {
    const response = await missing.app.inject({ url: '/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    expect(response.body).toContain('npm run build');
    expect(response.body).toContain('STELLWERK_CONSOLE_DIR');
  });

  it('gives the console its API timeout (STELLWERK_API_TIMEOUT_MS, else VUE_APP_API_TIMEOUT_MS, else 30 s)', async () => {
    const config = await built.app.inject({ url: '/api/v1/console/config' });
    expect(config.json()).toMatchObject({ apiTimeoutMs: 12_000 });
    const base = { STELLWERK_DATA_DIR: os.tmpdir() };
    expect(loadConfig(base).apiTimeoutMs).toBe(30_000);
    expect(loadConfig({ ...base, VUE_APP_API_TIMEOUT_MS: '45000' }).apiTimeoutMs).toBe(45_000);
    expect(
      loadConfig({ ...base, VUE_APP_API_TIMEOUT_MS: '45000', STELLWERK_API_TIMEOUT_MS: '5000' }).apiTimeoutMs,
    ).toBe(5_000);
    expect(() => loadConfig({ ...base, VUE_APP_API_TIMEOUT_MS: 'soon' })).toThrow(/VUE_APP_API_TIMEOUT_MS/);
  });

  it('the signed-in user carries the account UI settings the theme follows', async () => {
    const login = await built.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'x-requested-with': 'test' },
      payload: { email: 'admin@stellwerk.test', password: 'correct horse battery staple' },
    });
    expect(login.statusCode).toBe(200);
    const cookie = login.cookies[0]!;
    const user = await built.app.inject({ url: '/api/v1/user', cookies: { [cookie.name]: cookie.value } });
    expect(user.json<{ uiSettings: unknown }>().uiSettings).toEqual({});
  });
});
