import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { packetsOf } from './support/connectors.js';
import { statesOf } from './support/ingest-fixtures.js';
import { Lwm2mClientSimulator } from './support/lwm2m-client.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';
import { disconnectedRule } from './support/link-monitoring.js';

/**
 * The lwm2m connector against two peers on loopback: Debian's coap-client-notls (libcoap, an
 * independent CoAP implementation) registers, sends SenML values and garbage and de-registers;
 * a client built from the `coap` package is observed, takes read/write/execute downlinks, goes
 * away (its registration lapses, a status-duration rule fires) and registers again.
 */

const run = promisify(execFile);
let t: TestApp;
let call: ReturnType<typeof caller>;
let connectorId: string;
let serverPort: number;
let driverId: string;

async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

const logs = async () =>
  expectStatus<{ data: Array<{ level: string; message: string }> }>(
    await call('GET', `/xapi/v1/connectors/${connectorId}/logs?pageSize=200`),
    200,
  ).data.map((l) => `${l.level}: ${l.message}`);

const logged = (pattern: RegExp) =>
  waitFor(async () => (await logs()).find((line) => pattern.test(line)), 15_000, { what: `log ${pattern}` });

async function device(deviceKey: string): Promise<string> {
  return expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/virtual-devices', {
      device_id: deviceKey,
      title: deviceKey,
      connectorId,
      deviceDriverId: driverId,
    }),
    201,
  ).id;
}

const statesWhere = (deviceId: string, done: (s: Record<string, unknown>) => boolean) =>
  waitFor(
    async () => {
      const states = await statesOf(t, deviceId);
      return done(states) ? states : undefined;
    },
    15_000,
    { what: 'device states' },
  );

/** coap-client-notls from a fixed local port (the server knows a client by its address). */
const coapClient = (localPort: number, args: string[]) =>
  run('coap-client-notls', ['-B', '5', '-p', String(localPort), ...args], { timeout: 15_000 });

beforeAll(async () => {
  // The test listens on a free port and 127.0.0.1; the operator's default range is 5683-5699.
  t = await createTestApp({ env: { STELLWERK_LWM2M_PORTS: '1024-65535' } });
  call = caller(t, bearer(await login(t)));
  await t.services.downlinkQueue.start();
  serverPort = await freeUdpPort();
  driverId = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/device-drivers', { title: 'LwM2M JSON', parser: { type: 'json' } }),
    201,
  ).id;
  connectorId = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/connectors', {
      type: 'lwm2m',
      title: 'LwM2M',
      config: { port: serverPort, bindAddress: '127.0.0.1', observe: ['3303/0/5700', '3/0/9'] },
    }),
    201,
  ).id;
  await logged(new RegExp(`Connected to coap://127.0.0.1:${serverPort}`));
}, 60_000);

afterAll(async () => {
  if (connectorId) await call('POST', `/xapi/v1/connectors/${connectorId}/deactivate`);
  await t?.services.downlinkQueue.stop();
  await t?.close();
});

describe('lwm2m connector', () => {
  it('takes a registration, SenML values and a de-registration from libcoap; garbage is logged', async () => {
    const deviceId = await device('cli-1');
    const local = await freeUdpPort();
    const base = `coap://127.0.0.1:${serverPort}`;
    const registered = await coapClient(local, [
      '-v',
      '7',
      '-m',
      'post',
      '-e',
      '</1/0>,</3/0>',
      `${base}/rd?ep=cli-1&lt=60&lwm2m=1.1`,
    ]);
    const location = /c:2\.01.*Location-Path:rd, Location-Path:([0-9a-f]+)/.exec(
      registered.stdout + registered.stderr,
    );
    expect(location, 'a 2.01 Created with the registration location').not.toBeNull();
    await logged(/info: cli-1 registered \(lifetime 60 s, LwM2M 1\.1\)/);
    await logged(/cli-1 offers no object for 3303\/0\/5700; not observed/);

    const senml = '[{"bn":"/3303/0/","n":"5700","v":19.5},{"n":"5701","vs":"Cel"}]';
    await coapClient(local, ['-m', 'post', '-t', '110', '-e', senml, `${base}/dp`]);
    const states = await statesWhere(deviceId, (s) => s['3303/0/5700'] === 19.5);
    expect(states).toMatchObject({
      '3303/0/5701': 'Cel',
      '_meta.operation': 'send',
      '_meta.format': 'senml+json',
    });

    const garbage = await coapClient(local, ['-m', 'post', '-t', '112', '-e', 'not cbor', `${base}/dp`]);
    expect(garbage.stdout + garbage.stderr).toContain('4.00');
    await logged(/warn: Unreadable value from cli-1: The SenML CBOR payload is not valid CBOR/);

    await coapClient(local, ['-m', 'delete', `${base}/rd/${location![1]}`]);
    await logged(/info: cli-1 de-registered/);
    const after = await coapClient(local, ['-m', 'post', '-t', '110', '-e', senml, `${base}/dp`]);
    expect(after.stdout + after.stderr).toContain('4.03');
  });

  it('refuses a port another lwm2m connector listens on, and an address the operator does not allow, in the log', async () => {
    const refusal = async (config: Record<string, unknown>) => {
      const id = expectStatus<{ id: string }>(
        await call('POST', '/xapi/v1/connectors', { type: 'lwm2m', title: 'LwM2M twin', config }),
        201,
      ).id;
      const lines = await waitFor(
        async () => {
          const found = expectStatus<{ data: Array<{ level: string; message: string }> }>(
            await call('GET', `/xapi/v1/connectors/${id}/logs`),
            200,
          ).data.map((l) => `${l.level}: ${l.message}`);
          return found.length > 0 ? found : undefined;
        },
        15_000,
        { what: 'a log entry of the refused connector' },
      );
      expectStatus(await call('POST', `/xapi/v1/connectors/${id}/deactivate`), 200);
      return lines;
    };
    expect(await refusal({ port: serverPort, bindAddress: '127.0.0.1' })).toEqual([
      `error: UDP port ${serverPort} is used by another LwM2M connector`,
    ]);
    expect(await refusal({ port: serverPort, bindAddress: '0.0.0.0' })).toEqual([
      'error: LwM2M connectors may not listen on 0.0.0.0 here (STELLWERK_LWM2M_BIND_ADDRESSES: 127.0.0.1,::1)',
    ]);
  });

  it('observes a coap-package client, sends it read/write/execute, sees it lapse and re-registers it without duplicates', async () => {
    const deviceId = await device('sim-1');
    const ruleId = await disconnectedRule(call, connectorId, 30);
    const sim = new Lwm2mClientSimulator(serverPort, 'sim-1', 2);
    expect(await sim.start()).toBe('2.01');
    await statesWhere(deviceId, (s) => s['3303/0/5700'] === 21.5 && s['3/0/9'] === 87);
    sim.notify(22);
    const observed = await statesWhere(deviceId, (s) => s['3303/0/5700'] === 22);
    expect(observed).toMatchObject({
      '_meta.operation': 'notify',
      '_meta.format': 'senml+cbor',
      '_meta.path': '3303/0/5700',
    });

    // Downlinks: the bytes are a JSON command.
    const send = async (command: unknown) =>
      expectStatus<{ id: string }>(
        await call('POST', `/xapi/v1/virtual-devices/${deviceId}/downlinks`, {
          fPort: 1,
          bytes: Buffer.from(JSON.stringify(command)).toString('hex'),
        }),
        202,
      ).id;
    const settled = (id: string) =>
      waitFor(
        async () => {
          const list = expectStatus<{ data: Array<{ id: string; status: string; error: string | null }> }>(
            await call('GET', `/xapi/v1/virtual-devices/${deviceId}/downlinks`),
            200,
          ).data;
          const d = list.find((x) => x.id === id);
          return d && d.status !== 'queued' ? d : undefined;
        },
        15_000,
        { what: 'downlink settled' },
      );
    expect(await settled(await send({ op: 'write', path: '3311/0/5850', value: true }))).toMatchObject({
      status: 'sent',
    });
    expect(sim.written).toEqual(['1']);
    expect(await settled(await send({ op: 'execute', path: '3/0/4', args: "0='now'" }))).toMatchObject({
      status: 'sent',
    });
    expect(sim.executed).toEqual(["0='now'"]);
    expect(await settled(await send({ op: 'read', path: '3/0/0' }))).toMatchObject({ status: 'sent' });
    await statesWhere(deviceId, (s) => s['3/0/0'] === 'Stellwerk Sim');
    expect(await settled(await send({ op: 'jump', path: '3/0/4' }))).toMatchObject({
      status: 'failed',
      error: 'LwM2M command: "op" must be "read", "write" or "execute"',
    });
    expect(await settled(await send({ op: 'read', path: '3/0/77' }))).toMatchObject({
      status: 'failed',
      error: 'sim-1 answered read of 3/0/77 with 4.04',
    });

    sim.notifyRaw(Buffer.from('{{{'), 'application/senml+json');
    await logged(
      /warn: Unreadable value from sim-1 for 3303\/0\/5700: The SenML JSON payload is not valid JSON/,
    );

    // Connection loss: the client goes without de-registering; its lifetime of 2 s lapses.
    const evaluate = async (now: number) =>
      (await t.services.monitoringEvaluator.evaluate(new Date(now))).some((f) => f.ruleId === ruleId);
    expect(await evaluate(Date.now())).toBe(false);
    await sim.stop();
    await logged(/warn: Registration of sim-1 lapsed: no update within its lifetime of 2 s/);
    const lostAt = Date.now();
    expect(await evaluate(lostAt)).toBe(false);
    expect(await evaluate(lostAt + 31_000)).toBe(true);

    sim.temperature = 23;
    expect(await sim.start()).toBe('2.01');
    await statesWhere(deviceId, (s) => s['3303/0/5700'] === 23);
    sim.notify(24);
    await statesWhere(deviceId, (s) => s['3303/0/5700'] === 24);
    const temperatures = (await packetsOf(t, connectorId))
      .filter((p) => p.device_key === 'sim-1')
      .map((p) => JSON.parse(p.payload.toString()) as Record<string, unknown>)
      .filter((v) => '3303/0/5700' in v)
      .map((v) => v['3303/0/5700']);
    expect(temperatures).toEqual([21.5, 22, 23, 24]);
    expect(sim.observeRequests).toEqual(['3303/0/5700', '3/0/9', '3303/0/5700', '3/0/9']);
    await sim.stop();
  });
});
