import { once } from 'node:events';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnector, packetsOf, type ConnectorBody } from './support/connectors.js';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { freePort } from './support/mosquitto.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';
import { disconnectedRule } from './support/link-monitoring.js';

/**
 * The weather kind against a fake HTTP peer on loopback that answers `GET /v1/forecast` shaped as
 * the Open-Meteo documentation shows it (one object per place, an array for several): values to
 * device states of configured coordinates and of a twin's location, one request for both, no value
 * stored twice, the peer gone and back, an answer that is no forecast, and HTTP 429 with Retry-After.
 * The server's shortest poll interval is lowered to 1 s for the test.
 */

interface Fake {
  server: http.Server;
  requests: Array<{ at: number; url: URL; answer: string }>;
  observedAt: string;
  temperature: number;
  /** The next answers: `limit` once answers 429 with Retry-After 2, `garbage` is no JSON. */
  next: Array<'limit' | 'garbage'>;
}

const fake: Fake = {
  server: undefined as never,
  requests: [],
  observedAt: '2026-11-26T15:15',
  temperature: 3.4,
  next: [],
};

function place(latitude: number, longitude: number) {
  return {
    latitude,
    longitude,
    generationtime_ms: 0.04,
    utc_offset_seconds: 0,
    timezone: 'GMT',
    timezone_abbreviation: 'GMT',
    elevation: 38,
    current_units: { time: 'iso8601', interval: 'seconds', temperature_2m: '°C', precipitation: 'mm' },
    current: { time: fake.observedAt, interval: 900, temperature_2m: fake.temperature, precipitation: 0.2 },
    hourly_units: { time: 'iso8601', temperature_2m: '°C', precipitation: 'mm' },
    hourly: {
      time: ['2026-11-26T15:00', '2026-11-26T16:00', '2026-11-26T17:00'],
      temperature_2m: [fake.temperature, 2.9, 2.5],
      precipitation: [0.2, 1.5, 0],
    },
  };
}

async function startFake(port: number): Promise<void> {
  fake.server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://peer');
    const next = fake.next.shift();
    fake.requests.push({ at: Date.now(), url, answer: next ?? 'forecast' });
    if (next === 'limit') {
      response.writeHead(429, { 'retry-after': '2', 'content-type': 'application/json' });
      return response.end('{"error":true,"reason":"Too many requests"}');
    }
    if (next === 'garbage') return response.end('<html>maintenance</html>');
    const lat = (url.searchParams.get('latitude') ?? '').split(',').map(Number);
    const lon = (url.searchParams.get('longitude') ?? '').split(',').map(Number);
    const places = lat.map((l, i) => place(l, lon[i]!));
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(places.length === 1 ? places[0] : places));
  });
  fake.server.listen(port, '127.0.0.1');
  await once(fake.server, 'listening');
}

const stopFake = () =>
  new Promise<void>((resolve) => {
    fake.server.closeAllConnections();
    fake.server.close(() => resolve());
  });

let t: TestApp;
let call: ReturnType<typeof caller>;
let port: number;
let connector: ConnectorBody;
let berlin: string;
let twinDevice: string;
let twinId: string;

const logs = async () =>
  expectStatus<{ data: Array<{ level: string; message: string }> }>(
    await call('GET', `/xapi/v1/connectors/${connector.id}/logs?pageSize=100`),
    200,
  ).data.map((l) => `${l.level}: ${l.message}`);

const logged = (pattern: RegExp) =>
  waitFor(async () => (await logs()).find((m) => pattern.test(m)), 15_000, {
    what: `a log line like ${pattern}`,
  });

const states = async (deviceId: string) =>
  Object.fromEntries(
    expectStatus<{ data: Array<{ key: string; value: unknown }> }>(
      await call('GET', `/xapi/v1/virtual-devices/${deviceId}/states`),
      200,
    ).data.map((s) => [s.key, s.value]),
  );

const stateIs = (deviceId: string, key: string, value: unknown) =>
  waitFor(async () => ((await states(deviceId))[key] === value ? true : undefined), 15_000, {
    what: `state ${key} = ${String(value)}`,
  });

const berlinPackets = async () => (await packetsOf(t, connector.id)).filter((p) => p.device_key === 'berlin');

/** Waits until the peer has had `count` more requests. */
const requests = (count: number) => {
  const from = fake.requests.length;
  return waitFor(async () => (fake.requests.length >= from + count ? true : undefined), 15_000, {
    what: `${count} requests`,
  });
};

const device = async (deviceKey: string, driverId: string) =>
  expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/virtual-devices', {
      title: deviceKey,
      device_id: deviceKey,
      connectorId: connector.id,
      deviceDriverId: driverId,
    }),
    201,
  ).id;

beforeAll(async () => {
  t = await createTestApp({ env: { STELLWERK_WEATHER_MIN_INTERVAL_SECONDS: '1' } });
  call = caller(t, bearer(await login(t)));
  port = await freePort();
  await startFake(port);
  twinId = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/digital-twins', {
      title: 'Munich yard',
      latitude: 48.1374,
      longitude: 11.5755,
    }),
    201,
  ).id;
  const driverId = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/device-drivers', { title: 'weather json', parser: { type: 'json' } }),
    201,
  ).id;
  connector = await createConnector(t, bearer(await login(t)), {
    type: 'weather',
    active: false,
    config: {
      baseUrl: `http://127.0.0.1:${port}`,
      places: [{ latitude: 52.52, longitude: 13.405, deviceId: 'berlin' }],
      twinLocations: true,
      variables: ['temperature_2m', 'precipitation'],
      forecastHours: [1],
      intervalSeconds: 1,
    },
  });
  berlin = await device('berlin', driverId);
  twinDevice = await device(`twin-${twinId}`, driverId);
  expectStatus(await call('POST', `/xapi/v1/connectors/${connector.id}/activate`), 200);
}, 60_000);

afterAll(async () => {
  if (connector) await call('POST', `/xapi/v1/connectors/${connector.id}/deactivate`);
  await t?.close();
  await stopFake();
});

describe('weather connector', () => {
  it('stores current and hourly values of coordinates and of a twin location, asked in one request', async () => {
    await stateIs(berlin, 'temperature_2m', 3.4);
    await stateIs(twinDevice, 'temperature_2m', 3.4);
    expect(await states(berlin)).toMatchObject({
      precipitation: 0.2,
      'forecast.1h.temperature_2m': 2.9,
      'forecast.1h.precipitation': 1.5,
      '_meta.observedAt': '2026-11-26T15:15:00.000Z',
      '_meta.unit.temperature_2m': '°C',
    });
    expect((await states(twinDevice))['_meta.twinId']).toBe(twinId);
    const first = fake.requests[0]!.url;
    expect(first.pathname).toBe('/v1/forecast');
    expect(first.searchParams.get('latitude')).toBe('52.5200,48.1374');
    expect(first.searchParams.get('current')).toBe('temperature_2m,precipitation');
    expect(await logs()).toContain(`info: Connected to http://127.0.0.1:${port}/v1/forecast`);
  });

  it('stores a value once per observation time, however often it polls', async () => {
    await requests(2);
    expect(await berlinPackets()).toHaveLength(1);
    fake.observedAt = '2026-11-26T15:30';
    fake.temperature = 4.1;
    await stateIs(berlin, 'temperature_2m', 4.1);
    expect(await berlinPackets()).toHaveLength(2);
  });

  it('logs the loss when the API goes away, fires a status-duration rule and resumes without duplicates', async () => {
    const ruleId = await disconnectedRule(call, connector.id, 1);
    const evaluate = async (atMs: number) =>
      (await t.services.monitoringEvaluator.evaluate(new Date(atMs))).map((f) => f.ruleId);
    expect(await evaluate(Date.now())).not.toContain(ruleId);
    await stopFake();
    await logged(/^warn: Disconnected from http:\/\/127\.0\.0\.1:\d+\/v1\/forecast: Could not connect/);
    const down = Date.now();
    expect(await evaluate(down)).not.toContain(ruleId);
    expect(await evaluate(down + 2000)).toContain(ruleId);
    await startFake(port);
    await requests(2);
    // The API still reports the observation stored before the loss: nothing new is stored.
    expect(await berlinPackets()).toHaveLength(2);
  });

  it('logs an answer that is no forecast and carries on', async () => {
    fake.next.push('garbage');
    await logged(/^warn: Disconnected from .*: The weather API's answer is not a forecast: it is not JSON/);
    fake.observedAt = '2026-11-26T15:45';
    fake.temperature = 4.6;
    await stateIs(berlin, 'temperature_2m', 4.6);
  });

  it('asks nothing until Retry-After has passed after an HTTP 429', async () => {
    fake.next.push('limit');
    await logged(
      /^warn: Disconnected from .*: The weather API limits requests \(HTTP 429\): next request after/,
    );
    const limited = fake.requests.findIndex((r) => r.answer === 'limit');
    const after = await waitFor(async () => fake.requests[limited + 1], 15_000, { what: 'the next request' });
    expect(after.at - fake.requests[limited]!.at).toBeGreaterThanOrEqual(1900);
    expect(after.answer).toBe('forecast');
  });
});
