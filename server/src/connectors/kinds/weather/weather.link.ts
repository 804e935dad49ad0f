import { couldNotConnect, refusalOf } from '../../../outgoing/dial/connect-failure.js';
import type { TwinLocation } from '../../../twins/twin-locations.queries.js';
import type { Connector } from '../../connector.entity.js';
import { sleep } from '../../links/link-runtime.js';
import { LinkError, type LinkContext, type LinkDriver, type LinkSession } from '../../links/link.types.js';
import {
  coordinatesDeviceKey,
  DEFAULT_FORECAST_HOURS,
  DEFAULT_VARIABLES,
  forecastUrl,
  readForecast,
  WeatherAnswerError,
  type WeatherPlace,
  type WeatherQuery,
  type WeatherVariable,
} from './open-meteo.js';
import { WeatherGate } from './weather-gate.js';

/** Settings of a weather connector as stored. */
export interface WeatherConfig {
  baseUrl?: string;
  places?: Array<{ latitude: number; longitude: number; deviceId?: string }>;
  twinLocations?: boolean;
  twinTag?: string;
  variables?: WeatherVariable[];
  forecastHours?: number[];
  intervalSeconds?: number;
}

/** What the weather kind needs of the server (connector-kind.ts `KindDeps.weather`). */
export interface WeatherDeps {
  /** The twins of an account that have coordinates (twins/twin-locations.queries.ts). */
  twinLocations(accountId: string, options: { tag?: string; limit: number }): Promise<TwinLocation[]>;
  /** The operator's lower bound of poll intervals (STELLWERK_WEATHER_MIN_INTERVAL_SECONDS). */
  minIntervalSeconds: number;
}

export const DEFAULT_BASE_URL = 'https://api.open-meteo.com';
export const DEFAULT_INTERVAL_S = 900;
export const MAX_PLACES = 50;
export const MAX_TWIN_PLACES = 50;

/** The device id of a twin's location. */
export const twinDeviceKey = (twinId: string) => `twin-${twinId}`;

export function weatherTarget(connector: Connector): string {
  const base = (connector.config as WeatherConfig).baseUrl ?? DEFAULT_BASE_URL;
  try {
    const u = new URL(base);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}/v1/forecast`;
  } catch {
    return 'the weather API';
  }
}

const queryOf = (config: WeatherConfig): WeatherQuery => ({
  variables: config.variables?.length ? config.variables : DEFAULT_VARIABLES,
  forecastHours: config.forecastHours ?? DEFAULT_FORECAST_HOURS,
});

async function placesOf(
  connector: Connector,
  config: WeatherConfig,
  deps: WeatherDeps,
): Promise<WeatherPlace[]> {
  const places: WeatherPlace[] = (config.places ?? []).map((p) => ({
    deviceKey: p.deviceId || coordinatesDeviceKey(p.latitude, p.longitude),
    latitude: p.latitude,
    longitude: p.longitude,
  }));
  if (config.twinLocations) {
    const twins = await deps.twinLocations(connector.account.id, {
      ...(config.twinTag ? { tag: config.twinTag } : {}),
      limit: MAX_TWIN_PLACES,
    });
    for (const twin of twins)
      places.push({
        deviceKey: twinDeviceKey(twin.id),
        latitude: twin.latitude,
        longitude: twin.longitude,
        twinId: twin.id,
      });
  }
  return places;
}

/**
 * Polls an Open-Meteo-compatible forecast API (docs/connectors/weather.md). The link is "open" while
 * polls succeed: `open` runs the first poll, the session the following ones every interval, and a
 * poll that fails ends the session (a dropped link: logged, status `disconnected`, backoff). A
 * place's values are stored once per observation time (`current.time`), also across reconnects.
 */
export function weatherDriver(deps: WeatherDeps): LinkDriver {
  const gate = new WeatherGate();
  /** Per connector: the observation time last stored per device id. */
  const stored = new Map<string, Map<string, string>>();

  async function poll(ctx: LinkContext): Promise<void> {
    const config = ctx.connector.config as WeatherConfig;
    const places = await placesOf(ctx.connector, config, deps);
    if (places.length === 0)
      throw new LinkError('No location to poll: no coordinates are set and no twin has a location');
    const query = queryOf(config);
    const seen = stored.get(ctx.connector.id) ?? new Map<string, string>();
    stored.set(ctx.connector.id, seen);
    for (let i = 0; i < places.length; i += MAX_PLACES) {
      const batch = places.slice(i, i + MAX_PLACES);
      const url = forecastUrl(config.baseUrl ?? DEFAULT_BASE_URL, batch, query);
      const body = await gate.get(ctx, url, intervalMs(config, deps));
      let readings;
      try {
        readings = readForecast(body, batch, query);
      } catch (error) {
        gate.forget(url);
        if (error instanceof WeatherAnswerError) throw new LinkError(error.message);
        throw error;
      }
      for (const reading of readings) {
        if (seen.get(reading.place.deviceKey) === reading.observedAt) continue;
        await ctx
          .packet({
            deviceKey: reading.place.deviceKey,
            payload: Buffer.from(JSON.stringify(reading.values)),
            meta: { fields: reading.fields },
          })
          .catch(() => {
            throw new LinkError('Values not stored: the packet store cannot take them now');
          });
        seen.set(reading.place.deviceKey, reading.observedAt);
      }
    }
  }

  return {
    target: weatherTarget,
    async open(ctx) {
      await poll(ctx);
      return pollingSession(ctx, intervalMs(ctx.connector.config, deps), () => poll(ctx));
    },
  };
}

const intervalMs = (config: WeatherConfig, deps: WeatherDeps) =>
  Math.max(config.intervalSeconds ?? DEFAULT_INTERVAL_S, deps.minIntervalSeconds) * 1000;

/** Polls every `everyMs` until a poll fails (the reason, in words a tenant may read) or it is closed. */
function pollingSession(ctx: LinkContext, everyMs: number, poll: () => Promise<void>): LinkSession {
  const stop = new AbortController();
  const signal = AbortSignal.any([stop.signal, ctx.signal]);
  const closed = (async (): Promise<string> => {
    for (;;) {
      await sleep(everyMs, signal);
      if (signal.aborted) return 'stopped';
      try {
        await poll();
      } catch (error) {
        if (signal.aborted) return 'stopped';
        return failureReason(ctx, error);
      }
    }
  })();
  return {
    closed,
    close: async () => {
      stop.abort();
      await closed;
    },
  };
}

function failureReason(ctx: LinkContext, error: unknown): string {
  const refused = refusalOf(error);
  if (refused) return refused.message;
  if (error instanceof LinkError) return error.message;
  const target = weatherTarget(ctx.connector);
  ctx.dial.connectFailed(error, { connectorId: ctx.connector.id, target });
  return couldNotConnect(target);
}
