import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DataType, StatusCodes } from 'node-opcua';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from './support/auth.js';
import { createConnector, packetsOf, type ConnectorBody } from './support/connectors.js';
import { bearer, caller, errorCode, expectStatus, login } from './support/identity.js';
import { statesOf } from './support/ingest-fixtures.js';
import { freePort } from './support/mosquitto.js';
import { SOURCE_TIME, startOpcuaServer, USER, type OpcuaPeer } from './support/opcua-server.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';
import { disconnectedRule } from './support/link-monitoring.js';

/**
 * The opcua kind against a real node-opcua server: values of mapped nodes become device states with
 * their node id, status code and source timestamp; the console browses through the session; a
 * downlink writes a node; the server stopped and started again is logged, fires a status-duration
 * rule and is reconnected to without storing a value twice; a secured endpoint with a user login;
 * a peer that answers garbage is logged.
 */

const clock = new TestClock();
let t: TestApp;
let call: ReturnType<typeof caller>;
let dir: string;
let peer: OpcuaPeer;
let connector: ConnectorBody;
let deviceId: string;

const NODES = [
  { nodeId: 'ns=1;s=Boiler.Temperature', deviceId: 'boiler-1', state: 'temperature' },
  { nodeId: 'ns=1;s=Boiler.Pressure', deviceId: 'boiler-1', state: 'pressure' },
  { nodeId: 'ns=1;s=Boiler.Setpoint', deviceId: 'boiler-1', state: 'setpoint' },
  { nodeId: 'ns=1;s=Boiler.Counter', deviceId: 'boiler-1', state: 'counter' },
];

const logs = async (id: string) =>
  expectStatus<{ data: Array<{ level: string; message: string }> }>(
    await call('GET', `/xapi/v1/connectors/${id}/logs?limit=100`),
    200,
  ).data.map((l) => `${l.level}: ${l.message}`);

const logged = (id: string, pattern: RegExp) =>
  waitFor(async () => ((await logs(id)).some((m) => pattern.test(m)) ? true : undefined), 20_000, {
    what: `a log entry ${pattern}`,
  });

const connected = (id: string, up: boolean) =>
  waitFor(async () => (t.services.links.isConnected(id) === up ? true : undefined), 30_000, {
    what: up ? 'the OPC UA link' : 'the OPC UA link to drop',
  });

/** One connector-monitoring round at the test clock; the ids of the rules that fired. */
async function round(advanceMs = 0): Promise<string[]> {
  clock.advance(advanceMs);
  return (await t.services.monitoringEvaluator.evaluate(clock.now())).map((f) => f.ruleId);
}

/** The temperature values stored so far, in order. */
const temperatures = async () =>
  (await packetsOf(t, connector.id))
    .map((p) => JSON.parse(p.payload.toString()) as { temperature?: number })
    .filter((p) => p.temperature !== undefined)
    .map((p) => p.temperature);

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'stellwerk-opcua-'));
  peer = await startOpcuaServer(dir, await freePort());
  t = await createTestApp({ clock: clock.now, env: { STELLWERK_DATA_DIR: path.join(dir, 'data') } });
  call = caller(t, bearer(await login(t)));
  const driver = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/device-drivers', { title: 'json', parser: { type: 'json' } }),
    201,
  ).id;
  connector = await createConnector(t, bearer(await login(t)), {
    type: 'opcua',
    config: { endpointUrl: peer.url, samplingIntervalMs: 100, publishingIntervalMs: 100, nodes: NODES },
  });
  deviceId = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/virtual-devices', {
      device_id: 'boiler-1',
      title: 'Boiler 1',
      connectorId: connector.id,
      deviceDriverId: driver,
    }),
    201,
  ).id;
}, 120_000);

afterAll(async () => {
  await t?.services.downlinkQueue.stop();
  await t?.services.links.stop();
  await t?.close();
  await peer?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('opcua connector', () => {
  it('stores values of mapped nodes as device states with node id, status code and source time', async () => {
    await connected(connector.id, true);
    const states = await waitFor(async () => {
      const s = await statesOf(t, deviceId);
      return s.temperature !== undefined && s.counter !== undefined ? s : undefined;
    });
    expect(states).toMatchObject({ temperature: 21.5, setpoint: 60, counter: 2 ** 32 + 5 });
    expect(states['_meta.sourceTimestamp']).toBe(SOURCE_TIME.toISOString());
    // The failed pressure sensor arrives with its Bad status, without a value.
    const pressure = await waitFor(async () =>
      (await packetsOf(t, connector.id)).find((p) => JSON.stringify(p.meta).includes('Boiler.Pressure')),
    );
    expect(JSON.parse(pressure.payload.toString())).toEqual({});
    expect(pressure.meta).toMatchObject({
      fields: { nodeId: 'ns=1;s=Boiler.Pressure', statusCode: 'BadSensorFailure' },
    });
    expect(states.pressure).toBeUndefined();
    expect(await logs(connector.id)).toContain(`info: Connected to ${peer.url}`);
  });

  it('browses the server for the node picker', async () => {
    const browse = async (nodeId?: string) =>
      call(
        'GET',
        `/xapi/v1/connectors/${connector.id}/opcua/browse${nodeId ? `?nodeId=${encodeURIComponent(nodeId)}` : ''}`,
      );
    const root = expectStatus<{ connected: boolean; data: Array<{ nodeId: string; displayName: string }> }>(
      await browse(),
      200,
    );
    expect(root.connected).toBe(true);
    expect(root.data).toContainEqual(
      expect.objectContaining({ nodeId: 'ns=1;s=Boiler', displayName: 'Boiler' }),
    );
    const boiler = expectStatus<{ data: unknown[] }>(await browse('ns=1;s=Boiler'), 200);
    expect(boiler.data).toContainEqual({
      nodeId: 'ns=1;s=Boiler.Temperature',
      browseName: '1:Temperature',
      displayName: 'Temperature',
      nodeClass: 'Variable',
      dataType: 'Double',
    });
    expect((await browse('not a node id')).statusCode).toBe(400);
    expect(errorCode(await browse('ns=1;s=Nowhere'))).toBe('OPCUA_BROWSE_FAILED');
  });

  it('writes a node as a downlink and fails one the device may not write', async () => {
    await t.services.downlinkQueue.start();
    const send = async (command: unknown) =>
      expectStatus<{ id: string }>(
        await call('POST', `/xapi/v1/virtual-devices/${deviceId}/downlinks`, {
          fPort: 1,
          bytes: Buffer.from(JSON.stringify(command)).toString('hex'),
        }),
        202,
      ).id;
    const settled = (id: string) =>
      waitFor(async () => {
        const list = expectStatus<{
          data: Array<{ id: string; status: string; error: string | null; remoteId: string | null }>;
        }>(await call('GET', `/xapi/v1/virtual-devices/${deviceId}/downlinks`), 200);
        const d = list.data.find((x) => x.id === id);
        return d && d.status !== 'queued' ? d : undefined;
      });
    const ok = await settled(
      await send({ nodeId: 'ns=1;s=Boiler.Setpoint', value: 72.5, dataType: 'Double' }),
    );
    expect(ok).toMatchObject({ status: 'sent', remoteId: 'Good' });
    expect(peer.variable('Setpoint').readValue().value.value).toBe(72.5);
    // Without a data type, the node's own is used.
    await settled(await send({ nodeId: 'ns=1;s=Boiler.Setpoint', value: 65 }));
    expect(peer.variable('Setpoint').readValue().value.value).toBe(65);
    const notMapped = await settled(await send({ nodeId: 'ns=1;s=Boiler', value: 1, dataType: 'Double' }));
    expect(notMapped).toMatchObject({
      status: 'failed',
      error: 'ns=1;s=Boiler is not a node mapped to this device',
    });
    const readOnly = await settled(
      await send({ nodeId: 'ns=1;s=Boiler.Temperature', value: 1, dataType: 'Double' }),
    );
    expect(readOnly.error).toMatch(/The server refused the write: Bad(NotWritable|UserAccessDenied)/);
    const garbage = await settled(await send('not an object'));
    expect(garbage.error).toMatch(/JSON object/);
  });

  it('logs the loss of the server, fires a status-duration rule and reconnects without storing a value twice', async () => {
    const rule = await disconnectedRule(call, connector.id, 5);
    expect(await round()).not.toContain(rule);
    expect(await temperatures()).toEqual([21.5]);
    await peer.stop();
    await connected(connector.id, false);
    await logged(connector.id, /^warn: Disconnected from opc\.tcp:\/\/127\.0\.0\.1:\d+\/plant: /);
    expect(await round()).not.toContain(rule);
    expect(await round(6000)).toContain(rule);
    // Started again with the values it had (same source time): nothing new to store.
    peer = await startOpcuaServer(dir, peer.port);
    await connected(connector.id, true);
    peer
      .variable('Temperature')
      .setValueFromSource({ dataType: DataType.Double, value: 23.5 }, StatusCodes.Good);
    await waitFor(async () => ((await temperatures()).length >= 2 ? true : undefined));
    await new Promise((r) => setTimeout(r, 500));
    expect(await temperatures()).toEqual([21.5, 23.5]);
  });

  it('logs in to a secured endpoint with a user name and trusts its certificate on first use', async () => {
    const secured = await createConnector(t, bearer(await login(t)), {
      type: 'opcua',
      config: {
        endpointUrl: peer.url,
        securityMode: 'Sign',
        securityPolicy: 'Basic256Sha256',
        username: USER.name,
        password: USER.password,
        nodes: [{ nodeId: 'ns=1;s=Boiler.Temperature', deviceId: 'boiler-2', state: 'temperature' }],
      },
    });
    await connected(secured.id, true);
    await logged(secured.id, /^info: Trusted the server certificate on first use \(SHA-256 [0-9A-F:]{95}\)$/);
    await waitFor(async () => ((await packetsOf(t, secured.id)).length > 0 ? true : undefined));
    expect(secured.config.password).toBe('********');
    const wrong = await createConnector(t, bearer(await login(t)), {
      type: 'opcua',
      config: {
        ...secured.config,
        username: USER.name,
        password: 'wrong',
        serverCertificateSha256: undefined,
      },
    });
    await logged(wrong.id, /^error: The server refused the session: /);
    const pinned = await createConnector(t, bearer(await login(t)), {
      type: 'opcua',
      config: { ...secured.config, password: USER.password, serverCertificateSha256: 'ab'.repeat(32) },
    });
    await logged(pinned.id, /^error: The server certificate \(SHA-256 [0-9A-F:]+\) is not the pinned one/);
    expect(t.services.links.isConnected(pinned.id)).toBe(false);
    for (const c of [secured, wrong, pinned]) await call('DELETE', `/xapi/v1/connectors/${c.id}`);
  });

  it('logs a peer that answers garbage and keeps running', async () => {
    const garbage = net.createServer((socket) => socket.end(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n')));
    await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
    const port = (garbage.address() as net.AddressInfo).port;
    try {
      const bad = await createConnector(t, bearer(await login(t)), {
        type: 'opcua',
        config: { endpointUrl: `opc.tcp://127.0.0.1:${port}`, nodes: [] },
      });
      await logged(bad.id, /^error: /);
      expect(t.services.links.isConnected(bad.id)).toBe(false);
      // Nothing to browse without a session, and the node picker is told so.
      expect(
        expectStatus<{ connected: boolean; data: unknown[] }>(
          await call('GET', `/xapi/v1/connectors/${bad.id}/opcua/browse`),
          200,
        ),
      ).toEqual({ connected: false, data: [] });
      expect(t.services.links.isConnected(connector.id)).toBe(true);
      await call('DELETE', `/xapi/v1/connectors/${bad.id}`);
    } finally {
      garbage.close();
    }
  });
});
