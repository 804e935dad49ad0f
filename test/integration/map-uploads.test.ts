import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, errorCode, expectStatus, login, userWithPermissions } from './support/identity.js';
import { pmtilesArchive, pyramid, solidPng, TILE_TYPE } from './support/pmtiles-archive.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Basemap archives uploaded per account and site plans: streamed uploads with a size limit and no
 * partial file left behind, file types judged by their bytes, byte ranges, and who may read and
 * change them (the owner account and below; another tenant gets 404; a missing permission 403).
 */
const BASEMAP_LIMIT = 64 * 1024;
const PLAN_LIMIT = 32 * 1024;
const CORNERS = [
  [8.54, 47.38],
  [8.55, 47.38],
  [8.55, 47.37],
  [8.54, 47.37],
];

let t: TestApp;
let dataDir: string;
let admin: ReturnType<typeof caller>;
let archive: Buffer;
let site: string;
let child: string;
let sibling: string;

const basemapFolder = () => path.join(dataDir, 'basemaps');
const putBasemap = (
  accountId: string,
  body: Buffer | Readable,
  token?: string,
  type = 'application/vnd.pmtiles',
) =>
  t.app.inject({
    method: 'PUT',
    url: `/xapi/v1/accounts/${accountId}/basemap`,
    headers: { ...(token ? bearer(token) : adminHeaders), 'content-type': type },
    payload: body,
  });
let adminHeaders: { authorization: string };

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'stellwerk-map-uploads-'));
  t = await createTestApp({
    env: {
      STELLWERK_DATA_DIR: dataDir,
      STELLWERK_BASEMAP_MAX_BYTES: String(BASEMAP_LIMIT),
      STELLWERK_SITE_PLAN_MAX_BYTES: String(PLAN_LIMIT),
    },
  });
  adminHeaders = { authorization: `Bearer ${await login(t)}` };
  admin = caller(t, adminHeaders);
  archive = pmtilesArchive(
    pyramid(0, 1, () => solidPng([40, 120, 200], 8)),
    { tileType: TILE_TYPE.png },
  );
  const account = async (title: string, parentId?: string) =>
    expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/accounts', { title, ...(parentId ? { parentId } : {}) }),
      201,
    ).id;
  site = await account('Water works');
  child = await account('Pump station', site);
  sibling = await account('Other utility');
});
afterAll(async () => {
  await t?.close();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

describe('basemap upload', () => {
  it('stores a PMTiles archive, sets it as the basemap and serves byte ranges to the account and below', async () => {
    const uploaded = expectStatus<{ basemap: { url: string; bytes: number } }>(
      await putBasemap(site, archive),
      200,
    ).basemap;
    expect(uploaded.bytes).toBe(archive.length);
    expect(uploaded.url).toMatch(/^\/xapi\/v1\/basemaps\/[0-9a-f-]{36}\.pmtiles$/);
    const account = expectStatus<{ uiSettings: { mapStyleUrl?: string } }>(
      await admin('GET', `/xapi/v1/accounts/${site}`),
      200,
    );
    expect(account.uiSettings.mapStyleUrl).toBe(uploaded.url);

    const range = await t.app.inject({
      url: uploaded.url,
      headers: { ...adminHeaders, range: 'bytes=0-126' },
    });
    expect(range.statusCode).toBe(206);
    expect(range.headers['content-type']).toBe('application/vnd.pmtiles');
    expect(range.headers['content-range']).toBe(`bytes 0-126/${archive.length}`);
    expect(range.rawPayload.equals(archive.subarray(0, 127))).toBe(true);

    // A sub-account inherits the basemap and may read it; another tenant may not even learn it exists.
    const below = await userWithPermissions(t, adminHeaders, 'Pump operator', ['digitalTwin.read'], {
      accountId: child,
    });
    const beside = await userWithPermissions(t, adminHeaders, 'Other operator', ['all.read'], {
      accountId: sibling,
    });
    const read = (token: string) =>
      t.app.inject({ url: uploaded.url, headers: { ...bearer(token), range: 'bytes=0-6' } });
    expect((await read(below.token)).statusCode).toBe(206);
    const refused = await read(beside.token);
    expect(refused.statusCode).toBe(404);
    expect(errorCode(refused)).toBe('NOT_FOUND');
    expect((await t.app.inject({ url: uploaded.url })).statusCode).toBe(401);

    const audit = expectStatus<{ data: { action: string }[] }>(
      await admin('GET', `/xapi/v1/audit-events?accountId=${site}`),
      200,
    );
    expect(audit.data.map((e) => e.action)).toContain('account.basemap.upload');
  });

  it('takes the archive over a real connection, not only through injected requests', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const response = await fetch(`${address}/xapi/v1/accounts/${child}/basemap`, {
      method: 'PUT',
      headers: { ...adminHeaders, 'content-type': 'application/vnd.pmtiles' },
      body: new Uint8Array(archive),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(((await response.json()) as { basemap: { bytes: number } }).basemap.bytes).toBe(archive.length);
  });

  it('refuses an archive over the limit, streamed or declared, and leaves no partial file', async () => {
    const before = await fs.readdir(basemapFolder());
    const big = Buffer.concat([archive, Buffer.alloc(BASEMAP_LIMIT)]);
    // Streamed without a length: refused when the limit is passed.
    const streamed = await putBasemap(site, Readable.from([big.subarray(0, 40_000), big.subarray(40_000)]));
    expect(streamed.statusCode, streamed.body).toBe(413);
    expect(errorCode(streamed)).toBe('PAYLOAD_TOO_LARGE');
    // With a content-length over the limit: refused before reading.
    const declared = await putBasemap(site, big);
    expect(declared.statusCode).toBe(413);
    expect(await fs.readdir(basemapFolder())).toEqual(before);
  });

  it('refuses a file that is not a PMTiles v3 archive, by its bytes', async () => {
    const before = await fs.readdir(basemapFolder());
    const png = await putBasemap(site, solidPng([1, 2, 3], 64));
    expect(png.statusCode).toBe(415);
    expect(errorCode(png)).toBe('UNSUPPORTED_MEDIA_TYPE');
    const v2 = Buffer.from(archive);
    v2[7] = 2;
    expect((await putBasemap(site, v2)).statusCode).toBe(415);
    expect(await fs.readdir(basemapFolder())).toEqual(before);
  });

  it('needs account.manage; replacing removes the old archive and removing clears the setting', async () => {
    const viewer = await userWithPermissions(t, adminHeaders, 'Map viewer', ['account.read'], {
      accountId: site,
    });
    const refused = await putBasemap(site, archive, viewer.token);
    expect(refused.statusCode).toBe(403);

    const first = expectStatus<{ basemap: { url: string } }>(
      await admin('GET', `/xapi/v1/accounts/${site}/basemap`),
      200,
    ).basemap.url;
    const second = expectStatus<{ basemap: { url: string } }>(await putBasemap(site, archive), 200).basemap
      .url;
    expect(second).not.toBe(first);
    expect((await admin('GET', first)).statusCode).toBe(404);
    expect(await fs.readdir(basemapFolder())).not.toContain(path.basename(first));

    expect((await admin('DELETE', `/xapi/v1/accounts/${site}/basemap`)).statusCode).toBe(204);
    expect((await admin('GET', second)).statusCode).toBe(404);
    const account = expectStatus<{ uiSettings: { mapStyleUrl?: string } }>(
      await admin('GET', `/xapi/v1/accounts/${site}`),
      200,
    );
    expect(account.uiSettings.mapStyleUrl).toBeUndefined();
    expect(expectStatus(await admin('GET', `/xapi/v1/accounts/${site}/basemap`), 200)).toEqual({
      basemap: null,
    });
  });
});

describe('site plans', () => {
  it('creates, places, lists with paging, stores an image and deletes a plan', async () => {
    const created = expectStatus<{ id: string; image: null; opacity: number }>(
      await admin('POST', '/xapi/v1/site-plans', { title: 'Hall B', accountId: site }),
      201,
    );
    expect(created.image).toBeNull();
    expect(created.opacity).toBe(0.85);
    await admin('POST', '/xapi/v1/site-plans', { title: 'Hall A', accountId: site });
    const placed = expectStatus<{ corners: number[][]; minZoom: number }>(
      await t.app.inject({
        method: 'PATCH',
        url: `/xapi/v1/site-plans/${created.id}`,
        headers: adminHeaders,
        payload: { corners: CORNERS, minZoom: 16 },
      }),
      200,
    );
    expect(placed).toMatchObject({ corners: CORNERS, minZoom: 16 });

    const page = expectStatus<{ data: { title: string }[]; meta: { total: number } }>(
      await admin('GET', `/xapi/v1/site-plans?accountId=${site}&pageSize=1&sort=title`),
      200,
    );
    expect(page.meta.total).toBe(2);
    expect(page.data.map((p) => p.title)).toEqual(['Hall A']);

    const png = solidPng([200, 30, 30], 32);
    const withImage = expectStatus<{ image: { type: string; bytes: number; url: string } }>(
      await t.app.inject({
        method: 'PUT',
        url: `/xapi/v1/site-plans/${created.id}/image`,
        headers: { ...adminHeaders, 'content-type': 'image/png' },
        payload: png,
      }),
      200,
    );
    expect(withImage.image).toMatchObject({ type: 'image/png', bytes: png.length });
    const image = await admin('GET', withImage.image.url);
    expect(image.statusCode).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    expect(image.rawPayload.equals(png)).toBe(true);

    expect((await admin('DELETE', `/xapi/v1/site-plans/${created.id}`)).statusCode).toBe(204);
    expect((await admin('GET', withImage.image.url)).statusCode).toBe(404);
    const audit = expectStatus<{ data: { action: string }[] }>(
      await admin('GET', `/xapi/v1/audit-events?accountId=${site}&pageSize=100`),
      200,
    );
    expect(audit.data.map((e) => e.action)).toEqual(
      expect.arrayContaining([
        'sitePlan.create',
        'sitePlan.update',
        'sitePlan.image.upload',
        'sitePlan.delete',
      ]),
    );
  });

  it('refuses SVG, unknown bytes and images over the limit', async () => {
    const plan = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/site-plans', { title: 'Yard' }),
      201,
    );
    const put = (payload: Buffer, type: string) =>
      t.app.inject({
        method: 'PUT',
        url: `/xapi/v1/site-plans/${plan.id}/image`,
        headers: { ...adminHeaders, 'content-type': type },
        payload,
      });
    const svg = await put(
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
      'image/svg+xml',
    );
    expect(svg.statusCode).toBe(415);
    expect(errorCode(svg)).toBe('UNSUPPORTED_MEDIA_TYPE');
    // Labelled PNG, but the bytes are not.
    expect((await put(Buffer.from('GIF89a.....'), 'image/png')).statusCode).toBe(415);
    const big = Buffer.concat([solidPng([1, 1, 1], 8), Buffer.alloc(PLAN_LIMIT)]);
    const tooBig = await put(big, 'image/png');
    expect(tooBig.statusCode).toBe(413);
    expect(errorCode(tooBig)).toBe('PAYLOAD_TOO_LARGE');
    expect(
      expectStatus<{ image: null }>(await admin('GET', `/xapi/v1/site-plans/${plan.id}`), 200).image,
    ).toBeNull();
  });

  it('hides plans from other tenants and needs sitePlan.manage to change them', async () => {
    const plan = expectStatus<{ id: string }>(
      await admin('POST', '/xapi/v1/site-plans', { title: 'Basin', accountId: site }),
      201,
    );
    const beside = await userWithPermissions(t, adminHeaders, 'Sibling admin', ['all.manage'], {
      accountId: sibling,
    });
    const other = caller(t, bearer(beside.token));
    expect((await other('GET', `/xapi/v1/site-plans/${plan.id}`)).statusCode).toBe(404);
    expect((await other('DELETE', `/xapi/v1/site-plans/${plan.id}`)).statusCode).toBe(404);
    const listed = expectStatus<{ data: { id: string }[] }>(await other('GET', '/xapi/v1/site-plans'), 200);
    expect(listed.data.map((p) => p.id)).not.toContain(plan.id);

    // Twin readers read plans (digitalTwin.read implies sitePlan.read) but do not change them.
    const reader = await userWithPermissions(t, adminHeaders, 'Twin reader', ['digitalTwin.read'], {
      accountId: site,
    });
    const asReader = caller(t, bearer(reader.token));
    expect((await asReader('GET', `/xapi/v1/site-plans/${plan.id}`)).statusCode).toBe(200);
    const refused = await asReader('DELETE', `/xapi/v1/site-plans/${plan.id}`);
    expect(refused.statusCode).toBe(403);
    expect(errorCode(refused)).toBe('NO_PERMISSION_SITEPLAN.MANAGE');
  });
});
