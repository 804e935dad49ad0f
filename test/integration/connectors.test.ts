import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  bearer,
  caller,
  errorCode,
  expectStatus,
  login,
  userWithPermissions,
  type Credentials,
  type ListBody,
} from './support/identity.js';
import { CONNECTOR_TYPES } from '../../server/src/connectors/kinds/index.js';
import { createConnector, type ConnectorBody } from './support/connectors.js';
import { insertDevice } from './support/ingest-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let t: TestApp;
let admin: Credentials;
let call: ReturnType<typeof caller>;

beforeAll(async () => {
  t = await createTestApp({ env: { STELLWERK_PUBLIC_URL: 'https://iot.example.test' } });
  admin = bearer(await login(t));
  call = caller(t, admin);
});
afterAll(() => t.close());

interface LogBody {
  data: Array<{ level: string; message: string; details: Record<string, unknown>; createdAt: string }>;
}

describe('connectors', () => {
  it('creates an embedded-broker connector with credentials shown once, checked by authenticateBroker', async () => {
    const created = await createConnector(t, admin, { type: 'mqtt-broker', title: 'Site broker' });
    expect(created).toMatchObject({
      type: 'mqtt-broker',
      active: true,
      accountId: t.rootAccountId,
      capabilities: ['broker', 'receives', 'downlink', 'monitoring'],
      packetsIn: 0,
      packetsFailed: 0,
      lastPacketAt: null,
    });
    expect(created.creationDate).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(created.apiEndpoint).toMatch(/^mqtt:\/\/iot\.example\.test:\d+$/);
    const { username, password } = created.credentials!;
    expect(username).toBe(created.brokerUsername);
    expect(username).toMatch(/^c-[0-9a-f]{16}$/);
    expect(Buffer.from(password!, 'base64url')).toHaveLength(32);

    const one = expectStatus<ConnectorBody>(await call('GET', `/xapi/v1/connectors/${created.id}`), 200);
    expect(JSON.stringify(one)).not.toContain(password);
    expect(one).not.toHaveProperty('credentials');

    const broker = t.services.connectors;
    expect((await broker.authenticateBroker(username!, password!))?.id).toBe(created.id);
    expect(await broker.authenticateBroker(username!, `${password}x`)).toBeNull();
    expect(await broker.authenticateBroker('c-unknown', password!)).toBeNull();

    // Rotation: the old password is refused at once, live clients are told to go.
    const kicked: string[] = [];
    broker.onDeactivated((id) => kicked.push(id));
    const rotated = expectStatus<{ credentials: { username: string; password: string } }>(
      await call('POST', `/xapi/v1/connectors/${created.id}/credentials`),
      200,
    ).credentials;
    expect(rotated.username).toBe(username);
    expect(await broker.authenticateBroker(username!, password!)).toBeNull();
    expect((await broker.authenticateBroker(username!, rotated.password))?.id).toBe(created.id);
    expect(kicked).toEqual([created.id]);

    // Deactivated: credentials refused and the broker is told; activated again: accepted.
    const off = expectStatus<ConnectorBody>(
      await call('POST', `/xapi/v1/connectors/${created.id}/deactivate`),
      200,
    );
    expect(off.active).toBe(false);
    expect(kicked).toEqual([created.id, created.id]);
    expect(await broker.authenticateBroker(username!, rotated.password)).toBeNull();
    expectStatus(await call('POST', `/xapi/v1/connectors/${created.id}/activate`), 200);
    expect((await broker.authenticateBroker(username!, rotated.password))?.id).toBe(created.id);

    const logs = expectStatus<LogBody>(await call('GET', `/xapi/v1/connectors/${created.id}/logs`), 200);
    expect(logs.data.map((l) => l.message)).toEqual([
      'Connector activated',
      'Connector deactivated',
      'Credentials rotated',
    ]);
  });

  it('issues a webhook URL under the public URL, shown again on reads; rotation replaces it', async () => {
    const created = await createConnector(t, admin, { type: 'webhook-in' });
    expect(created.apiEndpoint).toMatch(/^https:\/\/iot\.example\.test\/xapi\/v1\/webhooks\/[\w-]{43}$/);
    expect(created.credentials).toEqual({ apiEndpoint: created.apiEndpoint });
    const read = expectStatus<ConnectorBody>(await call('GET', `/xapi/v1/connectors/${created.id}`), 200);
    expect(read.apiEndpoint).toBe(created.apiEndpoint);
    const rotated = expectStatus<{ credentials: { apiEndpoint: string } }>(
      await call('POST', `/xapi/v1/connectors/${created.id}/credentials`),
      200,
    );
    expect(rotated.credentials.apiEndpoint).not.toBe(created.apiEndpoint);
    const old = await t.app.inject({
      method: 'POST',
      url: new URL(created.apiEndpoint!).pathname,
      payload: { device_id: 'd1' },
    });
    expect(old.statusCode).toBe(404);
  });

  it('has no stored-only kind: every kind does something and refuses settings it does not know', async () => {
    const kinds = expectStatus<{ data: Array<{ type: string; capabilities: string[]; freeForm: boolean }> }>(
      await call('GET', '/xapi/v1/connector-kinds'),
      200,
    ).data;
    expect(kinds.filter((k) => k.capabilities.length === 0 || k.freeForm).map((k) => k.type)).toEqual([]);
    // A body written for the stored-only kind of earlier versions is now checked against the kind's settings.
    const refused = await call('POST', '/xapi/v1/connectors', {
      type: 'websocket',
      title: 'Old free-form body',
      config: { host: 'rtu1', port: 2404, saslPassword: 'kafka-secret' },
    });
    expect(refused.statusCode).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('/config/url');
  });

  it('documents one create body per kind, with the kind settings and write-only secrets', async () => {
    const doc = (await t.app.inject({ url: '/xapi/v1/openapi.json' })).json<{
      paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: Schema }> } }>>;
    }>();
    interface Schema {
      oneOf?: Schema[];
      properties?: Record<string, Schema & { enum?: string[]; writeOnly?: boolean }>;
    }
    const body = doc.paths['/xapi/v1/connectors']!.post!.requestBody.content['application/json']!.schema;
    const byType = new Map(body.oneOf!.map((branch) => [branch.properties!.type!.enum![0], branch]));
    expect(byType.size).toBe(CONNECTOR_TYPES.length);
    const mqttIn = byType.get('mqtt-in')!.properties!.config!.properties!;
    expect(mqttIn.password!.writeOnly).toBe(true);
    expect(mqttIn.url!.writeOnly).toBeUndefined();
    expect(byType.get('smtp-mail')!.properties!.config!.properties!.oauth2ClientSecret!.writeOnly).toBe(true);

    // Validation still answers with the kind's problems, not with the oneOf's.
    const bad = await call('POST', '/xapi/v1/connectors', {
      type: 'tts-uplink',
      title: 'bad',
      config: { deviceIdFrom: 'eui', applicationId: 7 },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json<{ error: { details: unknown[] } }>().error.details).toEqual([
      {
        path: '/config/deviceIdFrom',
        keyword: 'enum',
        params: { allowedValues: ['dev_eui', 'device_id'] },
        message: 'must be one of "dev_eui", "device_id"',
      },
      {
        path: '/config/applicationId',
        keyword: 'type',
        params: { type: 'string' },
        message: 'must be string',
      },
    ]);
  });

  it('serves every kind with its settings schema and device rules to readers of connectors', async () => {
    interface Kind {
      type: string;
      capabilities: string[];
      settings: { properties: Record<string, { writeOnly?: boolean }>; required?: string[] };
      freeForm: boolean;
      devices: { lowerCaseEui: boolean };
    }
    const reader = await userWithPermissions(t, admin, 'Kind Reader', ['connector.read']);
    const kinds = expectStatus<{ data: Kind[] }>(
      await caller(t, bearer(reader.token))('GET', '/xapi/v1/connector-kinds'),
      200,
    ).data;
    const byType = new Map(kinds.map((k) => [k.type, k]));
    expect(byType.size).toBe(CONNECTOR_TYPES.length);
    expect(byType.get('mqtt-in')!.settings.required).toEqual(['url', 'topics']);
    expect(byType.get('mqtt-in')!.settings.properties.clientKey!.writeOnly).toBe(true);
    expect(byType.get('webhook-out')!.capabilities).toEqual(['sends']);
    expect(kinds.filter((k) => k.devices.lowerCaseEui).map((k) => k.type)).toEqual([
      'tts-uplink',
      'chirpstack-uplink',
      'chirpstack-mqtt',
      'loriot-uplink',
    ]);
    expect(byType.get('websocket')).toMatchObject({ freeForm: false });
    expect(byType.get('websocket')!.capabilities).toContain('receives');
    const stranger = await userWithPermissions(t, admin, 'No Connectors', ['user.read']);
    expect((await caller(t, bearer(stranger.token))('GET', '/xapi/v1/connector-kinds')).statusCode).toBe(403);
  });

  it('validates mqtt-in settings and masks its password and client key', async () => {
    const bad = await call('POST', '/xapi/v1/connectors', {
      type: 'mqtt-in',
      title: 'bad',
      config: { url: 'http://x', topics: ['a/#/b'], qos: 2 },
    });
    expect(bad.statusCode).toBe(400);
    const paths = bad
      .json<{ error: { details: Array<{ path: string }> } }>()
      .error.details.map((d) => d.path);
    expect(paths).toEqual(expect.arrayContaining(['/config/url', '/config/topics/0', '/config/qos']));

    const created = await createConnector(t, admin, {
      type: 'mqtt-in',
      active: false,
      config: { url: 'mqtt://127.0.0.1:1', topics: ['plant/+/up'], username: 'u', password: 'p4ss' },
    });
    expect(created.config).toMatchObject({ username: 'u', password: '********' });
    expect(created.apiEndpoint).toBe('mqtt://127.0.0.1:1');
    expect(created.capabilities).toEqual(['subscribe', 'receives', 'downlink', 'monitoring']);
  });

  it('lists by type and searches titles; unknown sort fields are refused', async () => {
    await createConnector(t, admin, { type: 'tts-uplink', title: 'Things Stack EU1' });
    const list = expectStatus<ListBody<ConnectorBody>>(
      await call('GET', '/xapi/v1/connectors?type=tts-uplink'),
      200,
    );
    expect(list.data.map((c) => c.type)).toEqual(['tts-uplink']);
    const search = expectStatus<ListBody<ConnectorBody>>(
      await call('GET', '/xapi/v1/connectors?searchItems=things%20STACK'),
      200,
    );
    expect(search.data.map((c) => c.title)).toEqual(['Things Stack EU1']);
    expect((await call('GET', '/xapi/v1/connectors?sort=config')).statusCode).toBe(400);
    expect((await call('POST', '/xapi/v1/connectors', { type: 'nonsense', title: 'x' })).statusCode).toBe(
      400,
    );
  });

  it('blocks deletion while a device uses the connector, naming the device', async () => {
    const connector = await createConnector(t, admin, { type: 'webhook-in' });
    const deviceId = await insertDevice(t, {
      accountId: t.rootAccountId,
      connectorId: connector.id,
      deviceKey: 'meter-1',
      title: 'Meter 1',
    });
    const blocked = await call('DELETE', `/xapi/v1/connectors/${connector.id}`);
    expect(blocked.statusCode).toBe(409);
    expect(blocked.json()).toMatchObject({
      error: { code: 'DELETE_BLOCKED', details: [{ type: 'virtualDevice', id: deviceId, title: 'Meter 1' }] },
    });
    await t.orm.em.fork().getConnection().execute('DELETE FROM virtual_devices WHERE id = ?', [deviceId]);
    expect((await call('DELETE', `/xapi/v1/connectors/${connector.id}`)).statusCode).toBe(204);
    expect((await call('GET', `/xapi/v1/connectors/${connector.id}`)).statusCode).toBe(404);
  });

  const storedLogEntries = async (connectorId: string): Promise<number> => {
    const [row] = await t.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ n: string }>>('SELECT count(*) AS n FROM connector_logs WHERE connector_id = ?', [
        connectorId,
      ]);
    return Number(row!.n);
  };

  it('keeps only the newest 100 log entries, newest first', async () => {
    const connector = await createConnector(t, admin, { type: 'webhook-in' });
    for (let i = 0; i < 105; i++) await t.services.connectors.log(connector.id, 'info', `entry ${i}`, { i });
    const logs = expectStatus<LogBody>(await call('GET', `/xapi/v1/connectors/${connector.id}/logs`), 200);
    expect(logs.data).toHaveLength(100);
    expect(logs.data[0]!.message).toBe('entry 104');
    expect(logs.data[99]!.message).toBe('entry 5');
    expect(await storedLogEntries(connector.id)).toBe(100);
    const few = expectStatus<LogBody>(
      await call('GET', `/xapi/v1/connectors/${connector.id}/logs?limit=3`),
      200,
    );
    expect(few.data.map((l) => l.details.i)).toEqual([104, 103, 102]);
  });

  it('keeps exactly 100 log entries when they share a millisecond, in the order they were written', async () => {
    const connector = await createConnector(t, admin, { type: 'webhook-in' });
    // One frozen clock: every entry gets the same created_at, so only the ids can order them.
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-11-27T04:00:00.000Z') });
    try {
      for (let i = 0; i < 103; i++)
        await t.services.connectors.log(connector.id, 'info', `entry ${i}`, { i });
    } finally {
      vi.useRealTimers();
    }
    const logs = expectStatus<LogBody>(await call('GET', `/xapi/v1/connectors/${connector.id}/logs`), 200);
    expect(logs.data.map((l) => l.details.i)).toEqual(Array.from({ length: 100 }, (_, k) => 102 - k));
    expect(await storedLogEntries(connector.id)).toBe(100);
  });

  it('counts packets in the row (batched) and in /metrics', async () => {
    const connector = await createConnector(t, admin, { type: 'webhook-in' });
    t.services.connectors.recordPackets(connector.id, 'in', 3);
    t.services.connectors.recordPackets(connector.id, 'failed');
    const read = expectStatus<ConnectorBody>(await call('GET', `/xapi/v1/connectors/${connector.id}`), 200);
    expect(read).toMatchObject({ packetsIn: 3, packetsFailed: 1 });
    expect(read.lastPacketAt).not.toBeNull();
    await t.services.connectorTelemetry.flush();
    const row = await t.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ packets_in: string; packets_failed: string }>>(
        'SELECT packets_in, packets_failed FROM connectors WHERE id = ?',
        [connector.id],
      );
    expect(row[0]).toEqual({ packets_in: '3', packets_failed: '1' });
    const again = expectStatus<ConnectorBody>(await call('GET', `/xapi/v1/connectors/${connector.id}`), 200);
    expect(again).toMatchObject({ packetsIn: 3, packetsFailed: 1 });
    const counted = new RegExp(
      `stellwerk_connector_packets_total\\{[^}]*connector="${connector.id}"[^}]*result="in"[^}]*\\} 3\n`,
    );
    expect((await t.app.inject({ url: '/metrics' })).body).toMatch(counted);
    // Counted once, however often it is scraped.
    expect((await t.app.inject({ url: '/metrics' })).body).toMatch(counted);
  });

  it('needs connector.read to read and connector.manage (or Integration.manage) to change', async () => {
    const reader = await userWithPermissions(t, admin, 'Connector Reader', ['connector.read']);
    const integrator = await userWithPermissions(t, admin, 'Integrator', ['Integration.manage']);
    const asReader = caller(t, bearer(reader.token));
    expectStatus(await asReader('GET', '/xapi/v1/connectors'), 200);
    const refused = await asReader('POST', '/xapi/v1/connectors', { type: 'webhook-in', title: 'x' });
    expect(refused.statusCode).toBe(403);
    expect(errorCode(refused)).toBe('NO_PERMISSION_CONNECTOR.MANAGE');
    await createConnector(t, bearer(integrator.token), { type: 'webhook-in' });
  });
});
