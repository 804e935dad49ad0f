import { AppError, errors } from '../platform/errors.js';
import type { TwinAddress } from './digital-twin.entity.js';

export interface GeoPoint {
  latitude: number;
  longitude: number;
}

/**
 * Turns a postal address into coordinates. Pluggable: sites without internet run without one
 * (STELLWERK_GEOCODER_URL unset), and `?geocode=true` then answers 422 GEOCODER_NOT_CONFIGURED.
 * `null`: the geocoder knows no such address.
 */
export interface Geocoder {
  geocode(address: TwinAddress): Promise<GeoPoint | null>;
}

const TIMEOUT_MS = 5_000;

/** Structured-search parameters of Nominatim, by our address field. */
const NOMINATIM_FIELDS: Record<string, string> = {
  street: 'street',
  postalCode: 'postalcode',
  city: 'city',
  region: 'state',
  country: 'country',
};

/**
 * A Nominatim-compatible server (`GET /search?street=…&city=…&format=jsonv2&limit=1`), which
 * answers `[{lat: "52.5", lon: "13.4", …}]`; an empty list means no match. Public Nominatim
 * asks for an identifying User-Agent, so one is sent.
 */
export class NominatimGeocoder implements Geocoder {
  constructor(private readonly baseUrl: string) {}

  async geocode(address: TwinAddress): Promise<GeoPoint | null> {
    const url = new URL(`${this.baseUrl.replace(/\/+$/, '')}/search`);
    for (const [field, param] of Object.entries(NOMINATIM_FIELDS)) {
      const value = address[field];
      if (typeof value === 'string' && value.trim() !== '') url.searchParams.set(param, value.trim());
    }
    url.searchParams.set('format', 'jsonv2');
    url.searchParams.set('limit', '1');
    let body: unknown;
    try {
      const response = await fetch(url, {
        headers: { accept: 'application/json', 'user-agent': 'Stellwerk geocoder' },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      body = await response.json();
    } catch (error) {
      throw geocoderUnavailable(error instanceof Error ? error.message : String(error));
    }
    if (!Array.isArray(body)) throw geocoderUnavailable('the answer is not a list');
    const first = body[0] as { lat?: unknown; lon?: unknown } | undefined;
    if (!first) return null;
    const latitude = Number(first.lat);
    const longitude = Number(first.lon);
    if (!isLatitude(latitude) || !isLongitude(longitude)) {
      throw geocoderUnavailable('the answer has no valid lat/lon');
    }
    return { latitude, longitude };
  }
}

const isLatitude = (v: number) => Number.isFinite(v) && v >= -90 && v <= 90;
const isLongitude = (v: number) => Number.isFinite(v) && v >= -180 && v <= 180;

// 503: the request was fine, a service Stellwerk depends on was not; retrying later can help.
const geocoderUnavailable = (reason: string) =>
  new AppError('GEOCODER_UNAVAILABLE', 503, `The geocoder could not be used: ${reason}`);

/** Geocodes with the configured geocoder, with the coded errors the twin API documents. */
export async function locate(geocoder: Geocoder | null, address: TwinAddress | null): Promise<GeoPoint> {
  if (!geocoder) {
    throw errors.unprocessable(
      'GEOCODER_NOT_CONFIGURED',
      'Geocoding is off on this server (STELLWERK_GEOCODER_URL is not set); send latitude and longitude instead',
      [{ location: 'querystring', path: '/geocode' }],
    );
  }
  const hasText =
    !!address &&
    Object.keys(NOMINATIM_FIELDS).some((f) => typeof address[f] === 'string' && address[f].trim() !== '');
  if (!address || !hasText) {
    throw errors.validation('geocode=true needs an address with at least one of street, city, …', [
      { path: '/address' },
    ]);
  }
  const point = await geocoder.geocode(address);
  if (!point) {
    throw errors.unprocessable('ADDRESS_NOT_FOUND', 'The geocoder found no place for this address', [
      { path: '/address' },
    ]);
  }
  return point;
}
