import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, type TestApp } from './support/test-app.js';

/**
 * br/gzip on the wire: API answers compressed per request, the console's hashed assets sent as the
 * copies its build compressed, and everything that must not be touched left alone.
 */

// Big enough to be compressed, repetitive like real code.
const SCRIPT = `export const rows = [${Array.from({ length: 400 }, (_, i) => `{id:${i},name:"row ${i}"}`).join(',')}];\n`;
const PAGE = `<!doctype html><title>Stellwerk</title>${'<link rel="modulepreload" href="/assets/x.js">'.repeat(40)}`;

let t: TestApp;
let consoleDir: string;
let origin: string;

beforeAll(async () => {
  consoleDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-compression-'));
  const assets = path.join(consoleDir, 'assets');
  await fs.mkdir(assets);
  await fs.writeFile(path.join(consoleDir, 'index.html'), PAGE);
  await fs.writeFile(path.join(assets, 'app-1a2b3c.js'), SCRIPT);
  // Marked copies: the answer's bytes show which file was sent.
  await fs.writeFile(path.join(assets, 'app-1a2b3c.js.br'), zlib.brotliCompressSync(`${SCRIPT}//br`));
  await fs.writeFile(path.join(assets, 'app-1a2b3c.js.gz'), zlib.gzipSync(`${SCRIPT}//gz`));
  await fs.writeFile(path.join(assets, 'tile-9f8e7d.png'), Buffer.alloc(8192, 7));
  t = await createTestApp({ env: { STELLWERK_CONSOLE_DIR: consoleDir } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  origin = `127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  await t?.close();
  await fs.rm(consoleDir, { recursive: true, force: true });
});

const get = (url: string, headers: Record<string, string> = {}) =>
  t.app.inject({ url, headers: { 'accept-encoding': 'gzip, deflate, br', ...headers } });

describe('HTTP compression', () => {
  it('compresses API answers with brotli, else gzip, to the same JSON', async () => {
    const plain = await t.app.inject({ url: '/xapi/v1/docs/json' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.length).toBeGreaterThan(10_000);

    const br = await get('/xapi/v1/docs/json');
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(Number(br.headers['content-length'])).toBe(br.rawPayload.length);
    expect(br.rawPayload.length).toBeLessThan(plain.rawPayload.length / 4);
    expect(zlib.brotliDecompressSync(br.rawPayload).toString()).toBe(plain.body);

    const gzip = await get('/xapi/v1/docs/json', { 'accept-encoding': 'br;q=0, gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gzip.rawPayload).toString()).toBe(plain.body);

    const identity = await get('/xapi/v1/docs/json', { 'accept-encoding': 'identity' });
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.body).toBe(plain.body);
  });

  it('sends small answers and HEAD answers as they are', async () => {
    const small = await get('/health');
    expect(small.statusCode).toBe(200);
    expect(small.headers['content-encoding']).toBeUndefined();
    const head = await t.app.inject({ method: 'HEAD', url: '/', headers: { 'accept-encoding': 'br' } });
    expect(head.headers['content-encoding']).toBeUndefined();
  });

  it('serves hashed assets as their pre-compressed copy, cached immutable; ranges get the plain file', async () => {
    const br = await get('/assets/app-1a2b3c.js');
    expect(br.statusCode).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(zlib.brotliDecompressSync(br.rawPayload).toString()).toBe(`${SCRIPT}//br`);

    const gzip = await get('/assets/app-1a2b3c.js', { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gzip.rawPayload).toString()).toBe(`${SCRIPT}//gz`);
    // Each encoding its own validator, so a cache never pairs one's 304 with the other's body.
    expect(gzip.headers.etag).not.toBe(br.headers.etag);

    const plain = await t.app.inject({ url: '/assets/app-1a2b3c.js' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(SCRIPT);

    const range = await get('/assets/app-1a2b3c.js', { range: 'bytes=0-5' });
    expect(range.statusCode).toBe(206);
    expect(range.headers['content-encoding']).toBeUndefined();
    expect(range.body).toBe(SCRIPT.slice(0, 6));
  });

  it('leaves compressed types alone and compresses the page itself, which is never immutable', async () => {
    const png = await get('/assets/tile-9f8e7d.png');
    expect(png.statusCode).toBe(200);
    expect(png.headers['content-encoding']).toBeUndefined();
    expect(png.rawPayload.length).toBe(8192);

    const page = await get('/devices/123');
    expect(page.headers['content-encoding']).toBe('br');
    expect(page.headers['content-length']).toBeUndefined();
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(zlib.brotliDecompressSync(page.rawPayload).toString()).toBe(PAGE);
  });

  it('opens the live WebSocket for a client that offers compression', async () => {
    const login = await t.app.inject({
      method: 'POST',
      url: '/xapi/v1/auth/login',
      payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    });
    const { token } = login.json<{ token: string }>();
    const socket = new WebSocket(`ws://${origin}/xapi/v1/live`, ['stellwerk.live.v1', `bearer.${token}`], {
      headers: { 'accept-encoding': 'gzip, deflate, br' },
    });
    const opened = await new Promise<boolean>((resolve) => {
      socket.once('open', () => resolve(true));
      socket.once('error', () => resolve(false));
      socket.once('unexpected-response', () => resolve(false));
    });
    expect(opened).toBe(true);
    socket.close();
  });
});
