import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConnector } from './support/device-fixtures.js';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { insertDriver, sql } from './support/ingest-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { insertDevice, insertTwin } from './support/twin-fixtures.js';

type State = { id: string; value: unknown; timestamp: string | null };

let t: TestApp;
let call: ReturnType<typeof caller>;
let connectorId: string;
let driverId: string;

beforeAll(async () => {
  t = await createTestApp();
  call = caller(t, bearer(await login(t)));
  connectorId = await makeConnector(t, t.rootAccountId, 'mqtt-broker');
  driverId = await insertDriver(t);
}, 120_000);
afterAll(() => t?.close());

/** A device state as the ingest path leaves it after a packet (the device is quiet afterwards). */
const deviceState = (deviceId: string, key: string, value: unknown, at: string) =>
  sql(t, 'INSERT INTO device_states (device_id, key, value, timestamp) VALUES (?, ?, ?::jsonb, ?)', [
    deviceId,
    key,
    JSON.stringify(value),
    at,
  ]);
const addState = async (twinId: string, body: Record<string, unknown>) =>
  expectStatus<State>(await call('POST', `/xapi/v1/digital-twins/${twinId}/states`, body), 201);

describe('a new state fed by devices starts from their current value', () => {
  it('takes the current value of the device a connector source names, with its timestamp', async () => {
    const device = await insertDevice(t, driverId, connectorId, 'level-1', null);
    await deviceState(device, 'level', 4.05, '2026-01-02T03:04:05.000Z');
    const twinId = await insertTwin(t);
    const state = await addState(twinId, {
      key: 'level',
      source: { type: 'connector', connectorId, deviceId: device, stateKey: 'level' },
    });
    expect(state).toMatchObject({ value: 4.05, timestamp: '2026-01-02T03:04:05.000Z' });
    const other = await addState(twinId, {
      key: 'pressure',
      source: { type: 'connector', connectorId, deviceId: device, stateKey: 'pressure' },
    });
    expect(other).toMatchObject({ value: null, timestamp: null });
  });

  it('takes the newest value among the devices routed to the twin by referenceId', async () => {
    const older = await insertDevice(t, driverId, connectorId, 'ref-a', 'site-7');
    const newer = await insertDevice(t, driverId, connectorId, 'ref-b', 'site-7');
    const foreign = await insertDevice(t, driverId, connectorId, 'ref-c', 'site-8');
    await deviceState(older, 'flow', 1, '2026-01-02T00:00:00.000Z');
    await deviceState(newer, 'flow', 2, '2026-01-02T00:00:01.000Z');
    await deviceState(foreign, 'flow', 3, '2026-01-02T00:00:02.000Z');
    const twinId = await insertTwin(t, { referenceId: 'site-7' });
    const state = await addState(twinId, {
      key: 'flow',
      source: { type: 'dynamic-routing', stateKey: 'flow' },
    });
    expect(state).toMatchObject({ value: 2, timestamp: '2026-01-02T00:00:01.000Z' });
    const unrouted = await insertTwin(t);
    const empty = await addState(unrouted, {
      key: 'flow',
      source: { type: 'dynamic-routing', stateKey: 'flow' },
    });
    expect(empty.value).toBeNull();
  });
});
