/**
 * The Open-Meteo forecast API (`GET /v1/forecast`), as its documentation describes it: `latitude`
 * and `longitude` (comma-separated lists for several places, answered by a JSON array in the same
 * order), `current=` and `hourly=` variable lists, `forecast_hours`, `timezone=GMT` (times are
 * ISO 8601 without offset, in UTC). The answer: `{latitude, longitude, elevation, current_units,
 * current: {time, interval, <variable>: value}, hourly_units, hourly: {time: [...], <variable>:
 * [...]}}`; an error is HTTP 400 with `{error: true, reason}`.
 */

/** The variables a connector may ask for: temperature, precipitation, wind, radiation and a few more. */
export const WEATHER_VARIABLES = [
  'temperature_2m',
  'relative_humidity_2m',
  'apparent_temperature',
  'precipitation',
  'rain',
  'snowfall',
  'cloud_cover',
  'pressure_msl',
  'wind_speed_10m',
  'wind_direction_10m',
  'wind_gusts_10m',
  'shortwave_radiation',
  'direct_radiation',
  'diffuse_radiation',
  'weather_code',
] as const;
export type WeatherVariable = (typeof WEATHER_VARIABLES)[number];

export const DEFAULT_VARIABLES: readonly WeatherVariable[] = [
  'temperature_2m',
  'precipitation',
  'wind_speed_10m',
  'wind_direction_10m',
  'shortwave_radiation',
];
export const DEFAULT_FORECAST_HOURS: readonly number[] = [1, 3, 6, 12, 24];

/** One location the connector polls: a device of the connector with this `device_id` gets its states. */
export interface WeatherPlace {
  deviceKey: string;
  latitude: number;
  longitude: number;
  /** Set for a twin's location. */
  twinId?: string;
}

export interface WeatherQuery {
  variables: readonly WeatherVariable[];
  /** Hours ahead whose hourly values become `forecast.<h>h.<variable>` states; empty: no hourly request. */
  forecastHours: readonly number[];
}

/** One place's values: the payload for its device and the metadata for `_meta.*`. */
export interface WeatherReading {
  place: WeatherPlace;
  /** The time of the current values, ISO 8601 UTC: a reading with a time already stored is not stored again. */
  observedAt: string;
  values: Record<string, unknown>;
  fields: Record<string, string | number | boolean>;
}

export class WeatherAnswerError extends Error {
  constructor(message: string) {
    super(`The weather API's answer is not a forecast: ${message}`);
    this.name = 'WeatherAnswerError';
  }
}

/** Coordinates with 4 decimals (about 11 m): the request and the derived device id use the same. */
export const coordinate = (value: number): string => value.toFixed(4);

/** The device id of configured coordinates without a name: `52.5200,13.4050`. */
export const coordinatesDeviceKey = (latitude: number, longitude: number): string =>
  `${coordinate(latitude)},${coordinate(longitude)}`;

export function forecastUrl(baseUrl: string, places: readonly WeatherPlace[], query: WeatherQuery): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/v1/forecast`);
  url.searchParams.set('latitude', places.map((p) => coordinate(p.latitude)).join(','));
  url.searchParams.set('longitude', places.map((p) => coordinate(p.longitude)).join(','));
  url.searchParams.set('current', query.variables.join(','));
  if (query.forecastHours.length > 0) {
    url.searchParams.set('hourly', query.variables.join(','));
    url.searchParams.set('forecast_hours', String(Math.max(...query.forecastHours) + 1));
  }
  url.searchParams.set('timezone', 'GMT');
  return url.toString();
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `2026-11-26T15:00` (GMT, as asked) → epoch ms; NaN when it is no such time. */
function utcTime(value: unknown): number {
  if (typeof value !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?Z?$/.test(value)) return NaN;
  return Date.parse(value.endsWith('Z') ? value : `${value}Z`);
}

const numberOrNull = (value: unknown): value is number | null =>
  value === null || (typeof value === 'number' && Number.isFinite(value));

const HOUR_MS = 3_600_000;

function readPlace(entry: unknown, place: WeatherPlace, query: WeatherQuery, index: number): WeatherReading {
  const at = `location ${index + 1}`;
  if (!isObject(entry)) throw new WeatherAnswerError(`${at} is no object`);
  const current = entry.current;
  if (!isObject(current)) throw new WeatherAnswerError(`${at} has no current values`);
  const observed = utcTime(current.time);
  if (Number.isNaN(observed)) throw new WeatherAnswerError(`${at} has no valid current.time`);
  const values: Record<string, unknown> = {};
  for (const variable of query.variables) {
    const value = current[variable];
    if (value === undefined) continue;
    if (!numberOrNull(value)) throw new WeatherAnswerError(`${at}: current.${variable} is no number`);
    values[variable] = value;
  }
  if (query.forecastHours.length > 0) values.forecast = forecastOf(entry.hourly, observed, query, at);
  const fields: Record<string, string | number | boolean> = { observedAt: new Date(observed).toISOString() };
  for (const key of ['latitude', 'longitude', 'elevation'] as const)
    if (typeof entry[key] === 'number' && Number.isFinite(entry[key])) fields[key] = entry[key];
  if (place.twinId) fields.twinId = place.twinId;
  const units = isObject(entry.current_units) ? entry.current_units : {};
  for (const variable of query.variables)
    if (typeof units[variable] === 'string') fields[`unit.${variable}`] = units[variable].slice(0, 20);
  return { place, observedAt: fields.observedAt as string, values, fields };
}

/** `{ "1h": { temperature_2m: 3.1, … }, … }`: the hourly values of the hour that many hours after the current one. */
function forecastOf(
  hourly: unknown,
  observed: number,
  query: WeatherQuery,
  at: string,
): Record<string, Record<string, number | null>> {
  if (!isObject(hourly) || !Array.isArray(hourly.time))
    throw new WeatherAnswerError(`${at} has no hourly values`);
  const times = hourly.time.map(utcTime);
  const base = Math.floor(observed / HOUR_MS) * HOUR_MS;
  const forecast: Record<string, Record<string, number | null>> = {};
  for (const hours of query.forecastHours) {
    const i = times.indexOf(base + hours * HOUR_MS);
    if (i < 0) continue;
    const row: Record<string, number | null> = {};
    for (const variable of query.variables) {
      const series = hourly[variable];
      if (series === undefined) continue;
      if (!Array.isArray(series)) throw new WeatherAnswerError(`${at}: hourly.${variable} is no list`);
      const value: unknown = series[i];
      if (value === undefined) continue;
      if (!numberOrNull(value)) throw new WeatherAnswerError(`${at}: hourly.${variable} holds no number`);
      row[variable] = value;
    }
    forecast[`${hours}h`] = row;
  }
  return forecast;
}

/** The answer to `forecastUrl(…, places, query)`: one reading per place, in order. */
export function readForecast(
  body: string,
  places: readonly WeatherPlace[],
  query: WeatherQuery,
): WeatherReading[] {
  let document: unknown;
  try {
    document = JSON.parse(body) as unknown;
  } catch {
    throw new WeatherAnswerError(`it is not JSON (${body.length} characters)`);
  }
  const entries = Array.isArray(document) ? document : [document];
  if (entries.length !== places.length)
    throw new WeatherAnswerError(`${places.length} locations asked for, ${entries.length} answered`);
  return places.map((place, i) => readPlace(entries[i], place, query, i));
}

/** The reason of an Open-Meteo error answer (`{error: true, reason}`), if the body is one. */
export function errorReason(body: string): string | undefined {
  try {
    const document = JSON.parse(body) as unknown;
    if (isObject(document) && typeof document.reason === 'string') return document.reason.slice(0, 200);
  } catch {
    // Not JSON: no reason to tell.
  }
  return undefined;
}
