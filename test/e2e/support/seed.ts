import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * Seeding for the console's end-to-end tests: what a test needs but does not test in the browser
 * (connectors, drivers, devices, twins and their states) goes in through the XAPI, live values
 * through `mosquitto_pub`.
 */
const run = promisify(execFile);

/** The bearer token of a user, from the XAPI's login. */
export async function apiToken(baseUrl: string, email: string, password: string): Promise<string> {
  const login = await fetch(`${baseUrl}/xapi/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  return ((await login.json()) as { token: string }).token;
}

/** An XAPI call that throws on any status >= 400; the reply's JSON (null when empty). */
export type Xapi = <T = { id: string }>(method: string, url: string, body?: unknown) => Promise<T>;

/** An XAPI client signed in as the given user. */
export async function loginXapi(baseUrl: string, email: string, password: string): Promise<Xapi> {
  return xapiClient(baseUrl, await apiToken(baseUrl, email, password));
}

export function xapiClient(baseUrl: string, token: string): Xapi {
  return async <T>(method: string, url: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${baseUrl}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        // Only with a body: the server refuses a JSON content type on an empty DELETE.
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${url} → ${response.status} ${text}`);
    return (text ? JSON.parse(text) : null) as T;
  };
}

/** An MQTT broker connector with the credentials its creation showed once. */
export interface MqttConnector {
  id: string;
  username: string;
  password: string;
}

export async function createMqttConnector(xapi: Xapi, title: string): Promise<MqttConnector> {
  const connector = await xapi<{ id: string; credentials: { username: string; password: string } }>(
    'POST',
    '/xapi/v1/connectors',
    { type: 'mqtt-broker', title },
  );
  return { id: connector.id, ...connector.credentials };
}

export interface DeviceFields {
  device_id: string;
  title: string;
  referenceId?: string;
  tags?: string[];
}

/** A seeded device and its connector; `publish` sends JSON as the device itself would. */
export interface SeededDevice {
  connector: MqttConnector;
  driverId: string;
  deviceId: string;
  publish(payload: unknown): Promise<void>;
}

/**
 * An MQTT connector, a driver (`driver` is its body, e.g. a JSON parser with target variables) and
 * a device on both, as most live tests start; `mqttPort` is the harness's broker port.
 */
export async function seedMqttDevice(
  xapi: Xapi,
  mqttPort: number,
  seed: { connectorTitle: string; driver: Record<string, unknown>; device: DeviceFields },
): Promise<SeededDevice> {
  const connector = await createMqttConnector(xapi, seed.connectorTitle);
  const driver = await xapi('POST', '/xapi/v1/device-drivers', seed.driver);
  const device = await xapi('POST', '/xapi/v1/virtual-devices', {
    ...seed.device,
    connectorId: connector.id,
    deviceDriverId: driver.id,
  });
  const target = { mqttPort, connector, device_id: seed.device.device_id };
  return {
    connector,
    driverId: driver.id,
    deviceId: device.id,
    publish: (payload) => publishJson(target, payload),
  };
}

/** A data state of a twin fed by dynamic routing from the devices' state of the same key. */
export async function addRoutedState(
  xapi: Xapi,
  twinId: string,
  state: { key: string; title: string } & Record<string, unknown>,
): Promise<string> {
  const created = await xapi('POST', `/xapi/v1/digital-twins/${twinId}/states`, {
    ...state,
    source: { type: 'dynamic-routing', stateKey: state.key },
  });
  return created.id;
}

/** Publishes `payload` as JSON on a device's uplink topic, as the device itself would. */
export async function publishJson(
  target: { mqttPort: number; connector: MqttConnector; device_id: string },
  payload: unknown,
): Promise<void> {
  const { mqttPort, connector, device_id: deviceId } = target;
  const { stderr } = await run('mosquitto_pub', [
    ...['-h', '127.0.0.1', '-p', String(mqttPort), '-u', connector.username, '-P', connector.password],
    ...['-V', 'mqttv311', '-q', '1', '-t', `connectors/${connector.id}/devices/${deviceId}/up`],
    ...['-m', JSON.stringify(payload)],
  ]);
  expect(stderr).toBe('');
}

/** Signs in on the console's login page and waits for the home page. */
export async function signIn(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(baseUrl);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByTestId('greeting').waitFor();
}
