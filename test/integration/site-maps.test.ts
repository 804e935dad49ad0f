import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PMTiles, TileType, type RangeResponse, type Source } from 'pmtiles';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { login } from './support/identity.js';
import { pmtilesArchive, pyramid, solidPng, TILE_TYPE } from './support/pmtiles-archive.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, type TestApp } from './support/test-app.js';

/**
 * A site's own basemap: files in `<STELLWERK_DATA_DIR>/maps/` served at `/maps/…` with byte ranges
 * (what PMTiles readers ask for), their content types, and nothing outside the folder; and
 * STELLWERK_MAP_ORIGINS widening the console's content security policy for a tile server.
 */
let t: TestApp;
let dataDir: string;
let consoleDir: string;
let token: string;
let archive: Buffer;
const STYLE = { version: 8, sources: {}, layers: [{ id: 'bg', type: 'background' }] };

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-maps-'));
  consoleDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-console-'));
  await fs.writeFile(path.join(consoleDir, 'index.html'), '<!doctype html><title>Stellwerk</title>');
  await fs.mkdir(path.join(dataDir, 'maps', 'styles'), { recursive: true });
  archive = pmtilesArchive(
    pyramid(0, 1, (z) => solidPng(z === 0 ? [200, 40, 40] : [40, 200, 40], 8)),
    { tileType: TILE_TYPE.png, metadata: { name: 'test site' } },
  );
  await fs.writeFile(path.join(dataDir, 'maps', 'site.pmtiles'), archive);
  await fs.writeFile(path.join(dataDir, 'maps', 'styles', 'site.json'), JSON.stringify(STYLE));
  await fs.writeFile(path.join(dataDir, 'secret.key'), 'not for the browser');
  const maps = path.join(dataDir, 'maps');
  await fs.symlink('../secret.key', path.join(maps, 'relative.pmtiles'));
  await fs.symlink(path.join(dataDir, 'secret.key'), path.join(maps, 'absolute.json'));
  await fs.symlink(dataDir, path.join(maps, 'data'));
  await fs.symlink('..', path.join(maps, 'styles', 'up'));
  await fs.symlink('/dev/zero', path.join(maps, 'zero.pbf'));
  await fs.symlink('site.pmtiles', path.join(maps, 'alias.pmtiles'));
  const fifo = spawnSync('mkfifo', [path.join(maps, 'pipe.json')]);
  if (fifo.status !== 0) throw new Error(`mkfifo failed: ${fifo.stderr.toString()}`);
  t = await createTestApp({
    env: {
      STELLWERK_DATA_DIR: dataDir,
      STELLWERK_CONSOLE_DIR: consoleDir,
      STELLWERK_MAP_ORIGINS: 'https://tiles.example.com, http://10.0.0.5:8080',
    },
  });
  token = await login(t, ADMIN_EMAIL, ADMIN_PASSWORD);
});
afterAll(async () => {
  await t?.close();
  for (const dir of [dataDir, consoleDir]) if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const get = (url: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}`, ...headers } });

describe('site map files at /maps/', () => {
  it('answers a byte range with 206 and the PMTiles type, the whole file with 200', async () => {
    const range = await get('/maps/site.pmtiles', { range: 'bytes=0-126' });
    expect(range.statusCode).toBe(206);
    expect(range.headers['content-type']).toBe('application/vnd.pmtiles');
    expect(range.headers['content-range']).toBe(`bytes 0-126/${archive.length}`);
    expect(range.rawPayload.subarray(0, 7).toString('ascii')).toBe('PMTiles');
    expect(range.rawPayload.length).toBe(127);
    expect(range.headers['accept-ranges']).toBe('bytes');

    const whole = await get('/maps/site.pmtiles');
    expect(whole.statusCode).toBe(200);
    expect(whole.rawPayload.equals(archive)).toBe(true);

    const style = await get('/maps/styles/site.json');
    expect(style.statusCode).toBe(200);
    expect(style.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(style.json()).toEqual(STYLE);
  });

  it('is readable by the pmtiles package through ranges (the archive the e2e test draws)', async () => {
    const source: Source = {
      getKey: () => '/maps/site.pmtiles',
      getBytes: async (offset, length): Promise<RangeResponse> => {
        const response = await get('/maps/site.pmtiles', { range: `bytes=${offset}-${offset + length - 1}` });
        expect(response.statusCode).toBe(206);
        const bytes = response.rawPayload;
        return {
          data: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
        };
      },
    };
    const reader = new PMTiles(source);
    const header = await reader.getHeader();
    expect(header).toMatchObject({ tileType: TileType.Png, minZoom: 0, maxZoom: 1, numAddressedTiles: 5 });
    expect(await reader.getMetadata()).toEqual({ name: 'test site' });
    const tile = await reader.getZxy(1, 1, 0);
    expect(Buffer.from(tile!.data).equals(solidPng([40, 200, 40], 8))).toBe(true);
  });

  it('answers a range past the end with 416 and the error body', async () => {
    const response = await get('/maps/site.pmtiles', {
      range: `bytes=${archive.length + 10}-${archive.length + 20}`,
    });
    expect(response.statusCode).toBe(416);
    expect(response.json<{ error: { code: string } }>().error.code).toEqual(expect.any(String));
  });

  it('answers a missing file and a missing folder with 404', async () => {
    for (const url of ['/maps/other.pmtiles', '/maps/nothing/here.json']) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.json<{ error: { code: string } }>().error.code).toBe('NOT_FOUND');
    }
  });

  it('refuses paths that leave the maps folder, plain or encoded', async () => {
    for (const url of [
      '/maps/../secret.key',
      '/maps/%2e%2e/secret.key',
      '/maps/..%2fsecret.key',
      '/maps/styles/..%2f..%2fsecret.key',
      '/maps/%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      '/maps/.hidden',
    ]) {
      const response = await get(url);
      expect(response.statusCode, url).toBeGreaterThanOrEqual(400);
      expect(response.statusCode, url).toBeLessThan(500);
      expect(response.body, url).not.toContain('not for the browser');
      expect(response.json<{ error: { code: string } }>().error.code, url).toEqual(expect.any(String));
    }
  });

  it('refuses symlinks leading out of the folder, directories, devices and FIFOs', async () => {
    for (const url of [
      '/maps/relative.pmtiles',
      '/maps/absolute.json',
      '/maps/data/secret.key',
      '/maps/styles/up/../secret.key',
      '/maps/styles/up/up/secret.key',
      '/maps/zero.pbf',
      '/maps/pipe.json',
      '/maps/styles',
      '/maps/data',
    ]) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.body, url).not.toContain('not for the browser');
      expect(response.json<{ error: { code: string } }>().error.code, url).toBe('NOT_FOUND');
      const ranged = await get(url, { range: 'bytes=0-5' });
      expect(ranged.statusCode, url).toBe(404);
    }
  }, 10_000);

  it('serves a symlink to another file of the folder, and revalidates with 304', async () => {
    const alias = await get('/maps/alias.pmtiles');
    expect(alias.statusCode).toBe(200);
    expect(alias.rawPayload.equals(archive)).toBe(true);
    expect(alias.headers['cache-control']).toBe('no-cache');
    const again = await get('/maps/alias.pmtiles', { 'if-none-match': String(alias.headers.etag) });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
    const head = await t.app.inject({
      method: 'HEAD',
      url: '/maps/site.pmtiles',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe(String(archive.length));
    expect(head.rawPayload.length).toBe(0);
    const suffix = await get('/maps/site.pmtiles', { range: 'bytes=-10' });
    expect(suffix.statusCode).toBe(206);
    expect(suffix.rawPayload.equals(archive.subarray(archive.length - 10))).toBe(true);
  });

  it('needs a signed-in caller', async () => {
    const response = await t.app.inject({ url: '/maps/site.pmtiles' });
    expect(response.statusCode).toBe(401);
  });
});

describe('STELLWERK_MAP_ORIGINS', () => {
  it("adds the tile servers to the console page's connect-src and img-src, nothing else", async () => {
    const policy = (await t.app.inject({ url: '/' })).headers['content-security-policy'] as string;
    const directive = (name: string) => policy.split('; ').find((d) => d.startsWith(`${name} `));
    expect(directive('connect-src')).toBe(
      "connect-src 'self' ws: wss: https://tiles.example.com http://10.0.0.5:8080",
    );
    expect(directive('img-src')).toBe(
      "img-src 'self' data: blob: https://tiles.example.com http://10.0.0.5:8080",
    );
    expect(directive('script-src')).toBe("script-src 'self'");
    expect(directive('default-src')).toBe("default-src 'self'");
  });

  it('is empty by default and refuses anything but http(s) origins', () => {
    const base = { STELLWERK_DATA_DIR: dataDir };
    expect(loadConfig(base).mapOrigins).toEqual([]);
    expect(
      loadConfig({ ...base, STELLWERK_MAP_ORIGINS: 'https://a.example/ https://a.example' }).mapOrigins,
    ).toEqual(['https://a.example']);
    for (const bad of [
      'tiles.example.com',
      'ftp://tiles.example.com',
      'https://tiles.example.com/styles',
      '*',
    ]) {
      expect(() => loadConfig({ ...base, STELLWERK_MAP_ORIGINS: bad }), bad).toThrow(/STELLWERK_MAP_ORIGINS/);
    }
  });
});
