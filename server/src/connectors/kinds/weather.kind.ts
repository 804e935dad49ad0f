import { Type } from 'typebox';
import { PLAIN_DEVICES, type ConnectorKindDescriptor } from '../connector-kind.js';
import { linkKindRuntime } from '../links/link.types.js';
import { ConfigCheck } from './config-fields.js';
import { flag, integer, oneOf, settingsObject, text } from './settings-fields.js';
import { coordinatesDeviceKey, WEATHER_VARIABLES } from './weather/open-meteo.js';
import {
  DEFAULT_BASE_URL,
  DEFAULT_INTERVAL_S,
  MAX_PLACES,
  weatherDriver,
  type WeatherConfig,
} from './weather/weather.link.js';

/** Rules the schema cannot say: the base URL, at least one location, device ids used once. */
function check(config: Record<string, unknown>) {
  const check = new ConfigCheck(config);
  if (typeof config.baseUrl === 'string' && !/^https?:\/\/[^\s/?#]+[^\s?#]*$/i.test(config.baseUrl))
    check.problem(
      'baseUrl',
      'format',
      { format: 'http-url' },
      'must be an http:// or https:// URL without query',
    );
  const places = Array.isArray(config.places) ? (config.places as WeatherConfig['places'])! : [];
  if (places.length === 0 && config.twinLocations !== true)
    check.custom('places', 'set coordinates, or twinLocations to poll the locations of twins');
  const ids = new Set<string>();
  places.forEach((p, i) => {
    if (
      typeof p !== 'object' ||
      p === null ||
      typeof p.latitude !== 'number' ||
      typeof p.longitude !== 'number'
    )
      return;
    const id = p.deviceId || coordinatesDeviceKey(p.latitude, p.longitude);
    if (ids.has(id))
      check.problem(`places/${i}`, 'unique', { value: id }, `device id ${id} is used by another location`);
    ids.add(id);
  });
  return check.problems;
}

/**
 * Weather data (docs/connectors/weather.md): polls an Open-Meteo-compatible forecast API for
 * configured coordinates and the locations of twins, and stores current and hourly values as states
 * of one device per location. The link runtime (connectors/links/) keeps the polling.
 */
export const weatherKind: ConnectorKindDescriptor = {
  type: 'weather',
  direction: 'incoming',
  summary:
    'Polls an Open-Meteo-compatible forecast API per twin location or coordinates: current and hourly temperature, precipitation, wind, radiation as device states.',
  capabilities: ['subscribe', 'receives', 'monitoring'],
  monitoring: 'connection',
  settings: settingsObject({
    baseUrl: text(2000, `Base URL of the API; /v1/forecast is appended (default ${DEFAULT_BASE_URL})`),
    places: Type.Array(
      Type.Object(
        {
          latitude: Type.Number({ minimum: -90, maximum: 90 }),
          longitude: Type.Number({ minimum: -180, maximum: 180 }),
          deviceId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        },
        { additionalProperties: false },
      ),
      {
        maxItems: MAX_PLACES,
        description: 'Coordinates to poll; the device id defaults to "latitude,longitude" with 4 decimals',
      },
    ),
    twinLocations: flag('Also poll the location of each twin of the account (device id twin-<twin id>)'),
    twinTag: text(100, 'Only twins with this tag'),
    variables: Type.Array(oneOf(WEATHER_VARIABLES), {
      uniqueItems: true,
      maxItems: WEATHER_VARIABLES.length,
      description:
        'Values asked for (default temperature, precipitation, wind speed and direction, shortwave radiation)',
    }),
    forecastHours: Type.Array(integer(1, 168), {
      uniqueItems: true,
      maxItems: 12,
      description: 'Hours ahead stored as forecast.<h>h.<value> (default 1, 3, 6, 12, 24; empty: none)',
    }),
    intervalSeconds: integer(
      1,
      86_400,
      `Seconds between polls (default ${DEFAULT_INTERVAL_S}; at least the server's STELLWERK_WEATHER_MIN_INTERVAL_SECONDS, 60 unless set)`,
    ),
  }),
  check,
  devices: PLAIN_DEVICES,
  runtime: ({ links, weather }) =>
    linkKindRuntime(
      links,
      'weather',
      weatherDriver(weather ?? { twinLocations: async () => [], minIntervalSeconds: 60 }),
    ),
};
