import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeConnector } from './support/device-fixtures.js';
import { bearer, caller, errorCode, expectStatus, login } from './support/identity.js';
import { createTestApp, json, type TestApp } from './support/test-app.js';
import { insertTwin } from './support/twin-fixtures.js';

/** Deletions that data states block (409 DELETE_BLOCKED); the states API itself is in data-states.test.ts. */

type State = Record<string, unknown> & { id: string };

let t: TestApp;
let call: ReturnType<typeof caller>;
let twinId: string;
let otherTwinId: string;

const addState = async (body: Record<string, unknown>, twin = twinId) =>
  expectStatus<State>(await call('POST', `/xapi/v1/digital-twins/${twin}/states`, body), 201);
const put = (id: string, body: unknown) => call('PUT', `/xapi/v1/states/${id}`, body);
const details = (r: { body: string }) =>
  json<{ error: { details: Array<Record<string, unknown>> } }>(r as never).error.details;
const sum = (...stateIds: string[]) => ({ type: 'aggregate', operation: 'sum', stateIds });

beforeAll(async () => {
  t = await createTestApp();
  call = caller(t, bearer(await login(t)));
  twinId = await insertTwin(t, { title: 'Pump station' });
  otherTwinId = await insertTwin(t, { title: 'Tank' });
}, 120_000);
afterAll(() => t?.close());

describe('deletions blocked by data states', () => {
  it('blocks deleting a state other states aggregate, naming them', async () => {
    const base = await addState({ key: 'base' });
    const total = await addState({ key: 'total', source: sum(base.id) }, otherTwinId);
    const blocked = await call('DELETE', `/xapi/v1/states/${base.id}`);
    expect(blocked.statusCode).toBe(409);
    expect(errorCode(blocked)).toBe('DELETE_BLOCKED');
    expect(details(blocked)).toEqual([{ type: 'state', id: total.id, key: 'total', twinId: otherTwinId }]);
    expectStatus(await call('DELETE', `/xapi/v1/states/${total.id}`), 204);
    expectStatus(await call('DELETE', `/xapi/v1/states/${base.id}`), 204);
  });

  it('blocks deleting a device whose twin states feed aggregations, and a connector linked to a twin', async () => {
    const connectorId = await makeConnector(t, t.rootAccountId);
    const device = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/virtual-devices', { device_id: 'fed-1', title: 'Fed', connectorId }),
      201,
    );
    const fed = await addState({
      key: 'fed',
      source: { type: 'connector', connectorId, deviceId: device.id, stateKey: 'flow' },
    });
    const daily = await addState({
      key: 'fed-daily',
      source: { type: 'time-aggregated', stateId: fed.id, operation: 'sum', period: 'day' },
    });
    for (const url of [
      `/xapi/v1/virtual-devices/${device.id}`,
      `/xapi/v1/virtual-devices/${device.id}/delete-remotely/true`,
    ]) {
      const r = await call('DELETE', url);
      expect(r.statusCode, url).toBe(409);
      expect(errorCode(r)).toBe('DELETE_BLOCKED');
      expect(details(r)).toEqual([
        { type: 'state', id: daily.id, key: 'fed-daily', twinId, aggregates: [fed.id] },
      ]);
    }
    expectStatus(await call('DELETE', `/xapi/v1/states/${daily.id}`), 204);
    expectStatus(await call('DELETE', `/xapi/v1/virtual-devices/${device.id}`), 204);

    const linked = await call('DELETE', `/xapi/v1/connectors/${connectorId}`);
    expect(linked.statusCode).toBe(409);
    expect(errorCode(linked)).toBe('DELETE_BLOCKED');
    expect(details(linked)).toEqual([{ type: 'state', id: fed.id, key: 'fed', twinId }]);
    expectStatus(await put(fed.id, { source: null }), 200);
    expectStatus(await call('DELETE', `/xapi/v1/connectors/${connectorId}`), 204);
  });
});
