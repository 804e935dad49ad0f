import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../platform/errors.js';
import { locate, NominatimGeocoder } from './geocoder.js';

/** A real HTTP server on a free loopback port, answering by the `city` asked for. */
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const city = new URL(req.url ?? '/', 'http://x').searchParams.get('city');
    if (city === 'Broken') {
      res.writeHead(500).end('oops');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    if (city === 'Odd') res.end(JSON.stringify({ lat: 1 }));
    else if (city === 'Far') res.end(JSON.stringify([{ lat: '123', lon: '7' }]));
    else if (city === 'Zug') res.end(JSON.stringify([{ lat: '47.1662', lon: '8.5155' }]));
    else res.end('[]');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const codeOf = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return { code: (error as AppError).code, status: (error as AppError).status };
};

describe('Nominatim geocoder', () => {
  it('resolves an address and reports no match as null', async () => {
    const geocoder = new NominatimGeocoder(baseUrl);
    expect(await geocoder.geocode({ city: 'Zug' })).toEqual({ latitude: 47.1662, longitude: 8.5155 });
    expect(await geocoder.geocode({ city: 'Nowhere' })).toBeNull();
  });

  it('turns a failing, odd or out-of-range answer into 503 GEOCODER_UNAVAILABLE', async () => {
    const geocoder = new NominatimGeocoder(baseUrl);
    for (const city of ['Broken', 'Odd', 'Far']) {
      expect(await codeOf(geocoder.geocode({ city }))).toEqual({ code: 'GEOCODER_UNAVAILABLE', status: 503 });
    }
  });

  it('locate: 422 without a geocoder or a match, 400 without address text', async () => {
    const geocoder = new NominatimGeocoder(baseUrl);
    expect(await codeOf(locate(null, { city: 'Zug' }))).toEqual({
      code: 'GEOCODER_NOT_CONFIGURED',
      status: 422,
    });
    expect(await codeOf(locate(geocoder, { city: 'Atlantis' }))).toEqual({
      code: 'ADDRESS_NOT_FOUND',
      status: 422,
    });
    expect(await codeOf(locate(geocoder, { city: '  ' }))).toEqual({ code: 'VALIDATION_ERROR', status: 400 });
    expect(await codeOf(locate(geocoder, null))).toEqual({ code: 'VALIDATION_ERROR', status: 400 });
    expect(await locate(geocoder, { city: 'Zug' })).toEqual({ latitude: 47.1662, longitude: 8.5155 });
  });
});
