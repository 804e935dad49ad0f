import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { weatherKind } from '../weather.kind.js';
import { forecastUrl, readForecast, WeatherAnswerError, type WeatherPlace } from './open-meteo.js';
import { retryAfterMs } from './weather-gate.js';

const berlin: WeatherPlace = { deviceKey: '52.5200,13.4050', latitude: 52.52, longitude: 13.405 };
const query = { variables: ['temperature_2m', 'precipitation'] as const, forecastHours: [1, 3] };

/** An answer shaped as the Open-Meteo documentation shows it (GMT, ISO 8601 times without offset). */
const answer = (current: Record<string, unknown> = { temperature_2m: 3.4, precipitation: 0 }) => ({
  latitude: 52.52,
  longitude: 13.419998,
  generationtime_ms: 0.05,
  utc_offset_seconds: 0,
  timezone: 'GMT',
  timezone_abbreviation: 'GMT',
  elevation: 38,
  current_units: { time: 'iso8601', interval: 'seconds', temperature_2m: '°C', precipitation: 'mm' },
  current: { time: '2026-11-26T15:15', interval: 900, ...current },
  hourly_units: { time: 'iso8601', temperature_2m: '°C', precipitation: 'mm' },
  hourly: {
    time: ['2026-11-26T15:00', '2026-11-26T16:00', '2026-11-26T17:00', '2026-11-26T18:00'],
    temperature_2m: [3.4, 3.1, 2.8, 2.2],
    precipitation: [0, 0.1, null, 0.4],
  },
});

describe('Open-Meteo forecast', () => {
  it('asks for several places in one request, current and hourly, in GMT', () => {
    const url = new URL(
      forecastUrl(
        'http://mirror.local:8080/',
        [berlin, { ...berlin, latitude: 48.1374, longitude: 11.5755 }],
        query,
      ),
    );
    expect(url.pathname).toBe('/v1/forecast');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      latitude: '52.5200,48.1374',
      longitude: '13.4050,11.5755',
      current: 'temperature_2m,precipitation',
      hourly: 'temperature_2m,precipitation',
      forecast_hours: '4',
      timezone: 'GMT',
    });
  });

  it('reads current values, the hours ahead, units and the grid cell', () => {
    const [reading] = readForecast(JSON.stringify(answer()), [berlin], query);
    expect(reading!.observedAt).toBe('2026-11-26T15:15:00.000Z');
    expect(reading!.values).toEqual({
      temperature_2m: 3.4,
      precipitation: 0,
      forecast: {
        '1h': { temperature_2m: 3.1, precipitation: 0.1 },
        '3h': { temperature_2m: 2.2, precipitation: 0.4 },
      },
    });
    expect(reading!.fields).toEqual({
      observedAt: '2026-11-26T15:15:00.000Z',
      latitude: 52.52,
      longitude: 13.419998,
      elevation: 38,
      'unit.temperature_2m': '°C',
      'unit.precipitation': 'mm',
    });
    const two = readForecast(
      JSON.stringify([answer(), answer({ temperature_2m: 9 })]),
      [berlin, berlin],
      query,
    );
    expect(two[1]!.values.temperature_2m).toBe(9);
  });

  it('refuses answers that are no forecast for the places asked', () => {
    const refused = (body: string, places = [berlin]) => {
      try {
        readForecast(body, places, query);
      } catch (error) {
        expect(error).toBeInstanceOf(WeatherAnswerError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refused('<html>')).toBe(
      "The weather API's answer is not a forecast: it is not JSON (6 characters)",
    );
    expect(refused(JSON.stringify(answer()), [berlin, berlin])).toMatch(/2 locations asked for, 1 answered/);
    expect(refused(JSON.stringify({ ...answer(), current: { time: 'yesterday' } }))).toMatch(
      /no valid current.time/,
    );
    expect(refused(JSON.stringify(answer({ temperature_2m: 'warm' })))).toMatch(
      /current.temperature_2m is no number/,
    );
  });

  it('never throws anything but its own error, whatever the API answers', () => {
    const entry = fc.record(
      {
        elevation: fc.jsonValue(),
        current: fc.oneof(
          fc.jsonValue(),
          fc.record({
            time: fc.oneof(fc.constant('2026-11-26T15:15'), fc.string()),
            temperature_2m: fc.jsonValue(),
          }),
        ),
        current_units: fc.jsonValue(),
        hourly: fc.oneof(
          fc.jsonValue(),
          fc.record({
            time: fc.array(fc.oneof(fc.constant('2026-11-26T16:00'), fc.string())),
            precipitation: fc.jsonValue(),
          }),
        ),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      fc.string(),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      entry.map((e) => JSON.stringify(e)),
      fc.array(entry, { maxLength: 3 }).map((e) => JSON.stringify(e)),
    );
    fc.assert(
      fc.property(body, fc.integer({ min: 1, max: 3 }), (text, count) => {
        try {
          readForecast(
            text,
            Array.from({ length: count }, () => berlin),
            query,
          );
        } catch (error) {
          expect(error).toBeInstanceOf(WeatherAnswerError);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('waits as Retry-After says, in seconds or as a date, bounded', () => {
    const now = Date.parse('2026-11-26T15:00:00Z');
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs('Thu, 26 Nov 2026 15:01:00 GMT', now)).toBe(60_000);
    expect(retryAfterMs(null, now)).toBe(60_000);
    expect(retryAfterMs('soon', now)).toBe(60_000);
    expect(retryAfterMs('9999999', now)).toBe(24 * 3_600_000);
  });
});

describe('weather settings', () => {
  const problems = (config: Record<string, unknown>) =>
    weatherKind.check!(config).map((p) => `${p.path} ${p.message}`);

  it('need coordinates or twin locations, and each device id once', () => {
    expect(problems({ twinLocations: true })).toEqual([]);
    expect(problems({})).toEqual([
      '/config/places set coordinates, or twinLocations to poll the locations of twins',
    ]);
    expect(
      problems({
        places: [
          { latitude: 52.52, longitude: 13.405 },
          { latitude: 52.52001, longitude: 13.40501 },
        ],
      }),
    ).toEqual(['/config/places/1 device id 52.5200,13.4050 is used by another location']);
    expect(problems({ twinLocations: true, baseUrl: 'ftp://x' })).toEqual([
      '/config/baseUrl must be an http:// or https:// URL without query',
    ]);
  });
});
