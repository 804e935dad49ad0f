import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caller, errorCode, expectStatus, login } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

type Twin = Record<string, unknown> & { id: string };

describe('twin geocoding with a Nominatim-compatible server', () => {
  let geo: TestApp;
  let nominatim: Server;
  const requests: URLSearchParams[] = [];

  beforeAll(async () => {
    // Answers like Nominatim's /search: a list of places with lat/lon as text, empty for no match.
    nominatim = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      requests.push(url.searchParams);
      const known = url.pathname === '/search' && url.searchParams.get('city') === 'Bern';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(known ? [{ lat: '46.9480', lon: '7.4474', display_name: 'Bern' }] : []));
    });
    await new Promise<void>((resolve) => nominatim.listen(0, '127.0.0.1', resolve));
    const port = (nominatim.address() as AddressInfo).port;
    geo = await createTestApp({ env: { STELLWERK_GEOCODER_URL: `http://127.0.0.1:${port}` } });
  }, 120_000);
  afterAll(async () => {
    await geo?.close();
    await new Promise((resolve) => nominatim?.close(resolve));
  });

  it('resolves the address to coordinates on POST and PUT, and says when it finds nothing', async () => {
    const geoCall = caller(geo, { authorization: `Bearer ${await login(geo)}` });
    const twin = expectStatus<Twin>(
      await geoCall('POST', '/xapi/v1/digital-twins?geocode=true', {
        title: 'Federal square',
        address: { street: 'Bundesplatz 3', postalCode: '3005', city: 'Bern', country: 'CH' },
      }),
      201,
    );
    expect(twin).toMatchObject({ latitude: 46.948, longitude: 7.4474 });
    expect(Object.fromEntries(requests[0]!)).toMatchObject({
      street: 'Bundesplatz 3',
      postalcode: '3005',
      city: 'Bern',
      country: 'CH',
      format: 'jsonv2',
      limit: '1',
    });
    const nowhere = await geoCall('PUT', `/xapi/v1/digital-twins/${twin.id}?geocode=true`, {
      address: { city: 'Atlantis' },
    });
    expect(nowhere.statusCode).toBe(422);
    expect(errorCode(nowhere)).toBe('ADDRESS_NOT_FOUND');
    const noAddress = await geoCall('POST', '/xapi/v1/digital-twins?geocode=true', { title: 'Nowhere' });
    expect(noAddress.statusCode).toBe(400);
    const plain = expectStatus<Twin>(
      await geoCall('PUT', `/xapi/v1/digital-twins/${twin.id}`, { latitude: 1, longitude: 2 }),
      200,
    );
    expect(plain).toMatchObject({ latitude: 1, longitude: 2, address: { city: 'Bern' } });
  });
});
