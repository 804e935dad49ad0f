import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnector, packetsOf, type ConnectorBody } from './support/connectors.js';
import { bearer, caller, expectStatus, login, type Credentials } from './support/identity.js';
import { startPymodbus, startRawPeer, type ModbusSeed, type PymodbusServer } from './support/modbus-peer.js';
import { freePort } from './support/mosquitto.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';
import { disconnectedRule } from './support/link-monitoring.js';

/**
 * The modbus kind against Debian's pymodbus server: register-map values become device states with
 * their `_meta` register fields, downlinks write a holding register and a coil, a stopped and
 * restarted server shows in the log and fires a status-duration rule, and malformed answers are
 * logged without taking the server down.
 */

let t: TestApp;
let admin: Credentials;
let call: ReturnType<typeof caller>;
let peer: PymodbusServer | undefined;
let port: number;
let connector: ConnectorBody;
const devices: Record<string, string> = {};

// 21.5 as float32 is 0x41AC 0x0000; -3.25 is 0xC050 0x0000 (sent low word first); 20.0 is 0x41A0 0x0000.
const SEED: ModbusSeed = {
  hr: { 0: 0x41ac, 1: 0, 2: 0, 3: 0xc050, 4: 0xff85, 10: 0x41a0, 11: 0 },
  ir: { 0: 1234 },
  co: { 0: true, 1: false, 2: true },
  di: { 0: true },
};

const REGISTERS = [
  { deviceId: 'boiler-1', state: 'flowTemp', table: 'holding', address: 0, type: 'float32' },
  {
    deviceId: 'boiler-1',
    state: 'returnTemp',
    table: 'holding',
    address: 2,
    type: 'float32',
    wordOrder: 'little',
  },
  { deviceId: 'boiler-1', state: 'trim', table: 'holding', address: 4, type: 'int16' },
  { deviceId: 'boiler-1', state: 'setpoint', table: 'holding', address: 10, type: 'float32' },
  { deviceId: 'boiler-1', state: 'pressure', table: 'holding', address: 900 },
  { deviceId: 'pump-1', state: 'speed', table: 'input', address: 0, scale: 0.1 },
  { deviceId: 'pump-1', state: 'running', table: 'coil', address: 0 },
  { deviceId: 'pump-1', state: 'fault', table: 'coil', address: 1 },
  { deviceId: 'pump-1', state: 'valve', table: 'coil', address: 2 },
  { deviceId: 'pump-1', state: 'alarm', table: 'discrete', address: 0 },
];

beforeAll(async () => {
  t = await createTestApp();
  admin = bearer(await login(t));
  call = caller(t, admin);
  port = await freePort();
  peer = await startPymodbus(port, SEED);
  const driver = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/device-drivers', { title: 'json', parser: { type: 'json' } }),
    201,
  );
  connector = await createConnector(t, admin, {
    type: 'modbus',
    active: false,
    config: {
      host: '127.0.0.1',
      port,
      pollIntervalMs: 200,
      timeoutMs: 1000,
      report: 'change',
      registers: REGISTERS,
    },
  });
  for (const deviceId of ['boiler-1', 'pump-1']) {
    devices[deviceId] = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/virtual-devices', {
        title: deviceId,
        connectorId: connector.id,
        device_id: deviceId,
        deviceDriverId: driver.id,
      }),
      201,
    ).id;
  }
  expectStatus(await call('POST', `/xapi/v1/connectors/${connector.id}/activate`), 200);
  await t.services.downlinkQueue.start();
}, 60_000);

afterAll(async () => {
  await t?.services.downlinkQueue.stop();
  await t?.close();
  await peer?.stop();
});

const logs = async (id: string) =>
  expectStatus<{ data: Array<{ level: string; message: string }> }>(
    await call('GET', `/xapi/v1/connectors/${id}/logs`),
    200,
  ).data.map((l) => `${l.level}: ${l.message}`);

const logged = (id: string, pattern: RegExp, times = 1) =>
  waitFor(
    async () => {
      const lines = await logs(id);
      return lines.filter((l) => pattern.test(l)).length >= times ? lines : undefined;
    },
    15_000,
    { what: `${times}× ${String(pattern)} in the connector log` },
  ).catch(async (error: Error) => {
    throw new Error(`${error.message}; the log holds:\n${(await logs(id)).join('\n')}`);
  });

const states = async (deviceId: string) => {
  const list = expectStatus<{ data: Array<{ key: string; value: unknown }> }>(
    await call('GET', `/xapi/v1/virtual-devices/${devices[deviceId]}/states`),
    200,
  ).data;
  return Object.fromEntries(list.map((s) => [s.key, s.value]));
};

const statesWhere = (deviceId: string, done: (s: Record<string, unknown>) => boolean) =>
  waitFor(
    async () => {
      const s = await states(deviceId);
      return done(s) ? s : undefined;
    },
    15_000,
    { what: `states of ${deviceId}` },
  );

const downlink = async (deviceId: string, command: unknown) => {
  const bytes = Buffer.from(JSON.stringify(command)).toString('hex');
  const queued = expectStatus<{ id: string }>(
    await call('POST', `/xapi/v1/virtual-devices/${devices[deviceId]}/downlinks`, { fPort: 1, bytes }),
    202,
  );
  return waitFor(
    async () => {
      const list = expectStatus<{ data: Array<{ id: string; status: string; error: string | null }> }>(
        await call('GET', `/xapi/v1/virtual-devices/${devices[deviceId]}/downlinks`),
        200,
      ).data;
      const d = list.find((x) => x.id === queued.id);
      return d && d.status !== 'queued' ? d : undefined;
    },
    15_000,
    { what: 'the downlink handed over or failed' },
  );
};

/** Connector monitoring rounds at chosen times; returns whether the rule fired. */
const fires = async (ruleId: string, at: Date) =>
  (await t.services.monitoringEvaluator.evaluate(at)).some((f) => f.ruleId === ruleId);

describe('modbus connector against pymodbus', () => {
  it('polls the register map into states with their register as _meta fields; an illegal address is logged once and skipped', async () => {
    const boiler = await statesWhere('boiler-1', (s) => s.setpoint !== undefined);
    expect(boiler).toMatchObject({
      flowTemp: 21.5,
      returnTemp: -3.25,
      trim: -123,
      setpoint: 20,
      '_meta.flowTemp.table': 'holding',
      '_meta.flowTemp.address': 0,
      '_meta.flowTemp.unitId': 1,
      '_meta.returnTemp.address': 2,
    });
    expect(boiler.pressure).toBeUndefined();
    const pump = await statesWhere('pump-1', (s) => s.alarm !== undefined);
    expect(pump).toMatchObject({
      running: true,
      fault: false,
      valve: true,
      alarm: true,
      '_meta.alarm.table': 'discrete',
    });
    expect(pump.speed).toBeCloseTo(123.4);
    const lines = await logged(connector.id, /illegal data address/);
    await new Promise((r) => setTimeout(r, 600)); // a few more polls: the exception is not logged again
    const exceptions = (await logs(connector.id)).filter((l) => /illegal data address/.test(l));
    expect(exceptions).toEqual([
      'warn: Reading holding 900 on unit 1: the device answered "illegal data address" (exception 2); boiler-1/pressure skipped',
    ]);
    expect(lines).toContain(`info: Connected to modbus://127.0.0.1:${port}`);
    // The exception cost one value, not the connection.
    expect((await logs(connector.id)).filter((l) => /Disconnected|Connected/.test(l))).toEqual([
      `info: Connected to modbus://127.0.0.1:${port}`,
    ]);
  });

  it('shows a stopped server in log and monitoring, reconnects when it is back, and stores no value twice', async () => {
    const rule = await disconnectedRule(call, connector.id, 1);
    expect(await fires(rule, new Date())).toBe(false);
    const before = (await packetsOf(t, connector.id)).length;
    await peer!.stop();
    await logged(connector.id, /^warn: Disconnected from modbus:\/\/127\.0\.0\.1:\d+: /);
    expect(await fires(rule, new Date())).toBe(false);
    expect(await fires(rule, new Date(Date.now() + 2000))).toBe(true);
    peer = await startPymodbus(port, SEED);
    await logged(connector.id, /^info: Connected to modbus:/, 2);
    await new Promise((r) => setTimeout(r, 800)); // several polls of unchanged values after the reconnect
    expect((await packetsOf(t, connector.id)).length).toBe(before);
  });

  it('writes a float32 holding register and a coil as downlinks; the next poll reads them back', async () => {
    const packets = (await packetsOf(t, connector.id)).length;
    expect(await downlink('boiler-1', { state: 'setpoint', value: 21.5 })).toMatchObject({ status: 'sent' });
    expect(await downlink('pump-1', { table: 'coil', address: 2, value: false })).toMatchObject({
      status: 'sent',
    });
    expect((await statesWhere('boiler-1', (s) => s.setpoint === 21.5)).flowTemp).toBe(21.5);
    await statesWhere('pump-1', (s) => s.valve === false);
    const added = (await packetsOf(t, connector.id)).slice(packets);
    expect(added.map((p) => JSON.parse(p.payload.toString()) as unknown)).toEqual(
      expect.arrayContaining([{ setpoint: 21.5 }, { valve: false }]),
    );
    expect(added).toHaveLength(2);
    const refused = await downlink('pump-1', { state: 'speed', value: 1 });
    expect(refused).toMatchObject({ status: 'failed', error: 'speed is a input register: read-only' });
  });

  it('logs a malformed answer, drops the link and tries again, without harm to the server', async () => {
    // Answers every read with one register fewer than asked, framed correctly otherwise.
    const raw = await startRawPeer((request) => {
      const answer = Buffer.from([0, 0, 0, 0, 0, 5, request[6]!, 3, 2, 0x12, 0x34]);
      request.copy(answer, 0, 0, 2);
      return answer;
    });
    try {
      const bad = await createConnector(t, admin, {
        type: 'modbus',
        config: {
          host: '127.0.0.1',
          port: raw.port,
          pollIntervalMs: 200,
          registers: [{ deviceId: 'x', state: 'v', table: 'holding', address: 0, type: 'uint32' }],
        },
      });
      const lines = await logged(bad.id, /^info: Connected to/, 2);
      expect(lines).toContain(
        'error: Reading holding 0-1 on unit 1: malformed answer, the answer to a read of 2 holding registers has 2 bytes, not 4',
      );
      expect(lines.some((l) => /^warn: Disconnected from .*: malformed answer$/.test(l))).toBe(true);
      expect(await packetsOf(t, bad.id)).toEqual([]);
      expectStatus(await call('DELETE', `/xapi/v1/connectors/${bad.id}`), 204);
    } finally {
      await raw.close();
    }
    expect((await states('boiler-1')).setpoint).toBe(21.5);
  });
});
