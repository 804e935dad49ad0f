import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, errorCode, expectStatus, login, type Credentials } from './support/identity.js';
import { createConnector, packetsOf, type ConnectorBody } from './support/connectors.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let t: TestApp;
let admin: Credentials;
let connector: ConnectorBody;
let path: string;

beforeAll(async () => {
  t = await createTestApp();
  admin = bearer(await login(t));
  connector = await createConnector(t, admin, { type: 'webhook-in', title: 'Incoming' });
  path = new URL(connector.apiEndpoint!).pathname;
});
afterAll(() => t.close());

const post = (url: string, payload: unknown) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });

const logsOf = async (id: string) =>
  expectStatus<{ data: Array<{ level: string; message: string; details: Record<string, unknown> }> }>(
    await caller(t, admin)('GET', `/xapi/v1/connectors/${id}/logs`),
    200,
  ).data;

describe('incoming webhooks', () => {
  it('stores one packet per object before answering 202, addressed by device_id', async () => {
    const one = await post(path, { device_id: 'pump-1', flow: 3.5 });
    expect(one.statusCode, one.body).toBe(202);
    expect(one.json()).toEqual({ accepted: 1 });
    const batch = Array.from({ length: 50 }, (_, i) => ({ device_id: i, seq: i }));
    expect((await post(path, batch)).json()).toEqual({ accepted: 50 });

    const rows = await packetsOf(t, connector.id);
    expect(rows).toHaveLength(51);
    expect(rows[0]).toMatchObject({ device_key: 'pump-1', source: 'webhook' });
    expect(JSON.parse(rows[0]!.payload.toString())).toEqual({ device_id: 'pump-1', flow: 3.5 });
    expect(rows.slice(1).map((r) => r.device_key)).toEqual(batch.map((b) => String(b.device_id)));
    const read = expectStatus<ConnectorBody>(
      await caller(t, admin)('GET', `/xapi/v1/connectors/${connector.id}`),
      200,
    );
    expect(read.packetsIn).toBe(51);
  });

  it('refuses more than 50 items with the limit named, logs it and stores nothing', async () => {
    const before = (await packetsOf(t, connector.id)).length;
    const response = await post(
      path,
      Array.from({ length: 51 }, (_, i) => ({ device_id: `d${i}` })),
    );
    expect(response.statusCode).toBe(422);
    expect(response.json()).toMatchObject({
      error: { code: 'TOO_MANY_ITEMS', details: [{ limit: 50, received: 51 }] },
    });
    expect((await packetsOf(t, connector.id)).length).toBe(before);
    // The ingest pipeline logs the earlier packets' unknown devices too; find the refusal.
    const refusal = (await logsOf(connector.id)).find((l) => l.details.code === 'TOO_MANY_ITEMS');
    expect(refusal).toMatchObject({ level: 'warn' });
    expect(refusal!.message).toContain('At most 50');
  });

  it('refuses items without device_id and non-object items', async () => {
    expect(errorCode(await post(path, [{ device_id: 'a' }, { value: 1 }]))).toBe('DEVICE_ID_MISSING');
    expect(errorCode(await post(path, [1, 2]))).toBe('INVALID_PAYLOAD');
    expect(errorCode(await post(path, []))).toBe('INVALID_PAYLOAD');
  });

  it('answers 404 for an unknown token and refuses a deactivated connector', async () => {
    expect((await post('/xapi/v1/webhooks/not-a-token', { device_id: 'x' })).statusCode).toBe(404);
    const other = await createConnector(t, admin, { type: 'webhook-in' });
    const otherPath = new URL(other.apiEndpoint!).pathname;
    expectStatus(await caller(t, admin)('POST', `/xapi/v1/connectors/${other.id}/deactivate`), 200);
    const refused = await post(otherPath, { device_id: 'x' });
    expect(refused.statusCode).toBe(403);
    expect(errorCode(refused)).toBe('CONNECTOR_INACTIVE');
    expect(await packetsOf(t, other.id)).toEqual([]);
    expectStatus(await caller(t, admin)('POST', `/xapi/v1/connectors/${other.id}/activate`), 200);
    expect((await post(otherPath, { device_id: 'x' })).statusCode).toBe(202);
  });

  it('does not accept a token of a connector kind without webhooks', async () => {
    const broker = await createConnector(t, admin, { type: 'mqtt-broker' });
    expect(broker.apiEndpoint).not.toContain('/webhooks/');
    expect(
      (await post(`/xapi/v1/webhooks/${broker.credentials!.password}`, { device_id: 'x' })).statusCode,
    ).toBe(404);
  });
});
