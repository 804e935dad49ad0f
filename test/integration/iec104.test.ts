import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from './support/auth.js';
import { createConnector, packetsOf, type ConnectorBody } from './support/connectors.js';
import { bearer, caller, expectStatus, login } from './support/identity.js';
import { asdu, cp56, float32, int16, int32, ioa, Outstation } from './support/iec104-outstation.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';
import { disconnectedRule } from './support/link-monitoring.js';

/**
 * The iec104 kind against an outstation simulator on loopback (support/iec104-outstation.ts,
 * written from the standard's frame formats): interrogated values and spontaneous ones become
 * device states with their address, cause and quality as `_meta` states; a double command reaches
 * the outstation as select and execute; a lost outstation shows in the log and fires a status
 * duration rule, and the link comes back without storing a value twice; malformed frames are
 * logged without taking the server down.
 */

const clock = new TestClock();
let t: TestApp;
let call: ReturnType<typeof caller>;
let connector: ConnectorBody;
const devices: Record<string, string> = {};
const switchedAt = new Date('2026-11-28T21:05:09.250Z');

const outstation = new Outstation(() => [
  asdu(13, 0x02, 20, 1, [...ioa(1001), ...float32(21.5), 0x00, ...ioa(1002), ...float32(7), 0x80]),
  asdu(11, 0x81, 20, 1, [...ioa(1101), ...int16(2345), 0x00]),
  asdu(30, 0x01, 20, 1, [...ioa(2001), 0x01, ...cp56(switchedAt)]),
  asdu(3, 0x01, 20, 1, [...ioa(2002), 0x02]),
  asdu(15, 0x01, 20, 1, [...ioa(3001), ...int32(123456), 0x05]),
]);

const POINTS = [
  'ioa;device_id;state;type;scale',
  '1001;feeder-1;temperature;float;',
  '1002;feeder-1;pressure;float;',
  '1101;feeder-1;power;scaled;0.1',
  '2001;switch-1;closed;single;',
  '2002;switch-1;position;double;',
  '3001;switch-1;energy;total;',
  '6001;switch-1;breaker;double-command;',
].join('\n');

beforeAll(async () => {
  t = await createTestApp({ clock: clock.now });
  call = caller(t, bearer(await login(t)));
  await t.services.downlinkQueue.start();
  await outstation.start();
  for (const key of ['feeder-1', 'switch-1']) devices[key] = '';
}, 60_000);

afterAll(async () => {
  if (connector) await call('DELETE', `/xapi/v1/connectors/${connector.id}`);
  await t?.services.downlinkQueue.stop();
  await outstation.stop();
  await t?.close();
});

const logs = async () =>
  expectStatus<{ data: Array<{ level: string; message: string }> }>(
    await call('GET', `/xapi/v1/connectors/${connector.id}/logs?limit=100`),
    200,
  ).data.map((l) => `${l.level}: ${l.message}`);

const logged = (pattern: RegExp, times = 1) =>
  waitFor(
    async () => ((await logs()).filter((l) => pattern.test(l)).length >= times ? true : undefined),
    20_000,
    {
      what: `${times} log line(s) matching ${pattern}`,
    },
  );

const states = async (key: string) => {
  const body = expectStatus<{ data: Array<{ key: string; value: unknown }> }>(
    await call('GET', `/xapi/v1/virtual-devices/${devices[key]}/states`),
    200,
  );
  return Object.fromEntries(body.data.map((s) => [s.key, s.value]));
};

const stateIs = (key: string, state: string, value: unknown) =>
  waitFor(async () => ((await states(key))[state] === value ? true : undefined), 15_000, {
    what: `${key} ${state} = ${JSON.stringify(value)}`,
  });

const round = async (advanceMs = 0) => {
  clock.advance(advanceMs);
  return (await t.services.monitoringEvaluator.evaluate(clock.now())).map((f) => f.ruleId);
};

describe('iec104 connector against an outstation', () => {
  it('interrogates after STARTDT and stores values by the point list with address, cause and quality', async () => {
    // Devices exist before the link opens, so the interrogation's values find them.
    connector = await createConnector(t, bearer(await login(t)), {
      type: 'iec104',
      active: false,
      config: { host: '127.0.0.1', port: outstation.port, t1: 3, t2: 1, t3: 2, points: POINTS },
    });
    expect(connector.capabilities).toEqual(['subscribe', 'receives', 'downlink', 'monitoring']);
    // The default JSON parser turns `{"<state>": value}` into the state.
    const driver = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/device-drivers', { title: 'IEC 104 values', parser: { type: 'json' } }),
      201,
    ).id;
    for (const key of Object.keys(devices))
      devices[key] = expectStatus<{ id: string }>(
        await call('POST', '/xapi/v1/virtual-devices', {
          title: key,
          connectorId: connector.id,
          device_id: key,
          deviceDriverId: driver,
        }),
        201,
      ).id;
    expectStatus(await call('POST', `/xapi/v1/connectors/${connector.id}/activate`), 200);
    await logged(new RegExp(`info: Connected to iec104://127.0.0.1:${outstation.port}`));
    await stateIs('switch-1', 'energy', 123456);
    expect(await states('feeder-1')).toMatchObject({
      temperature: 21.5,
      pressure: 7,
      '_meta.ioa': 1101,
      '_meta.cot': 20,
      '_meta.commonAddress': 1,
    });
    const feeder = await states('feeder-1');
    expect(feeder.power).toBeCloseTo(234.5, 6);
    const sw = await states('switch-1');
    expect(sw).toMatchObject({ closed: true, position: 'on', energy: 123456 });
    expect(sw['_meta.counterSeq']).toBe(5);
    const closedPacket = (await packetsOf(t, connector.id)).find(
      (p) => p.payload.toString() === '{"closed":true}',
    );
    expect(closedPacket?.meta).toMatchObject({
      receivedAt: switchedAt.toISOString(),
      fields: { ioa: 2001, typeId: 30, cot: 20, iv: false, timeInvalid: false },
    });
    const pressure = (await packetsOf(t, connector.id)).find(
      (p) => p.payload.toString() === '{"pressure":7}',
    );
    expect(pressure?.meta).toMatchObject({ fields: { ioa: 1002, iv: true } });
    expect(outstation.clockSyncs).toEqual([1]);
  });

  it('stores spontaneous values and acknowledges every I-frame once it is stored', async () => {
    outstation.send(asdu(13, 0x01, 3, 1, [...ioa(1001), ...float32(22.25), 0x00]));
    await stateIs('feeder-1', 'temperature', 22.25);
    expect((await states('feeder-1'))['_meta.cot']).toBe(3);
    // t2 is 1 s: the client acknowledges what it stored without waiting for w frames.
    await waitFor(async () => (outstation.ackedByClient === outstation.sent ? true : undefined), 5000, {
      what: 'an S-frame acknowledging every I-frame',
    });
  });

  it('sends a double command as select and execute, and fails a refused one with the reason', async () => {
    const hex = (doc: unknown) => Buffer.from(JSON.stringify(doc)).toString('hex');
    const send = async (doc: unknown) =>
      expectStatus<{ id: string }>(
        await call('POST', `/xapi/v1/virtual-devices/${devices['switch-1']}/downlinks`, {
          fPort: 1,
          bytes: hex(doc),
        }),
        202,
      ).id;
    const settled = (id: string) =>
      waitFor(
        async () => {
          const list = expectStatus<{ data: Array<{ id: string; status: string; error: string | null }> }>(
            await call('GET', `/xapi/v1/virtual-devices/${devices['switch-1']}/downlinks`),
            200,
          );
          const d = list.data.find((x) => x.id === id);
          return d && d.status !== 'queued' ? d : undefined;
        },
        15_000,
        { what: 'the downlink settled' },
      );
    expect(await settled(await send({ state: 'breaker', value: 'on' }))).toMatchObject({ status: 'sent' });
    expect(outstation.commands).toEqual([
      { typeId: 46, ioa: 6001, select: true, state: 2 },
      { typeId: 46, ioa: 6001, select: false, state: 2 },
    ]);
    outstation.refuseCommands = true;
    const refused = await settled(await send({ state: 'breaker', value: 'off' }));
    expect(refused).toMatchObject({ status: 'failed' });
    expect(refused.error).toMatch(/refused the select \(negative confirmation\)/);
    const unknown = await settled(await send({ state: 'valve', value: true }));
    expect(unknown.error).toMatch(/has no command point "valve"/);
    expect(outstation.commands).toHaveLength(3);
  });

  it('logs malformed ASDUs and unknown types and keeps the link; a broken APCI closes it and it comes back', async () => {
    outstation.send(asdu(13, 0x02, 3, 1, [...ioa(1001), ...float32(1), 0x00]));
    outstation.send(asdu(200, 0x01, 3, 1, [...ioa(9), 0x01]));
    outstation.send(asdu(13, 0x01, 3, 1, [...ioa(1002), ...float32(8.5), 0x00]));
    await stateIs('feeder-1', 'pressure', 8.5);
    await logged(/warn: Malformed IEC 104 ASDU skipped: ASDU type 13 with 2 object\(s\) needs 16 octets/);
    await logged(/warn: IEC 104 type identification 200 is not supported/);
    expect(outstation.connections).toBe(1);
    outstation.raw(Buffer.from([0x68, 0x02, 0x00, 0x00]));
    await logged(/error: Malformed IEC 104 frame: APDU length octet 2 is outside 4..253/);
    await logged(/warn: Disconnected from iec104:.*malformed frame/);
    await waitFor(
      async () => (outstation.connections === 2 && outstation.connected ? true : undefined),
      15_000,
      {
        what: 'the reconnect',
      },
    );
    await logged(/info: Connected to iec104:/, 2);
  });

  it('shows a lost outstation in the log and status, fires a status duration rule and stores no value twice', async () => {
    const rule = await disconnectedRule(call, connector.id, 5);
    expect(await round()).not.toContain(rule);
    outstation.send(asdu(13, 0x01, 3, 1, [...ioa(1001), ...float32(23.75), 0x00]));
    await stateIs('feeder-1', 'temperature', 23.75);
    await outstation.stop();
    await logged(/warn: Disconnected from iec104:.*closed the connection/);
    expect(await round()).not.toContain(rule);
    expect(await round(6000)).toContain(rule);
    await outstation.start();
    await logged(/info: Connected to iec104:/, 3);
    outstation.send(asdu(13, 0x01, 3, 1, [...ioa(1001), ...float32(24.5), 0x00]));
    await stateIs('feeder-1', 'temperature', 24.5);
    const spontaneous = (await packetsOf(t, connector.id))
      .filter((p) => (p.meta as { fields?: { cot?: number } } | null)?.fields?.cot === 3)
      .map((p) => p.payload.toString());
    expect(spontaneous.sort()).toEqual(
      ['{"temperature":22.25}', '{"pressure":8.5}', '{"temperature":23.75}', '{"temperature":24.5}'].sort(),
    );
  });

  it('stores a time-tagged value once when the outstation sends it again after an abrupt drop', async () => {
    const at = new Date('2026-11-28T22:10:00.500Z');
    const tagged = async () =>
      (await packetsOf(t, connector.id)).filter((p) => p.payload.toString() === '{"temperature":26.5}');
    outstation.resendUnacknowledged = true;
    try {
      outstation.send(asdu(36, 0x01, 3, 1, [...ioa(1001), ...float32(26.5), 0x00, ...cp56(at)]));
      await stateIs('feeder-1', 'temperature', 26.5);
      // Stored, not yet acknowledged (the client acknowledges every w frames or after t2).
      expect(outstation.unacknowledged).toBeGreaterThan(0);
      const connections = outstation.connections;
      outstation.dropConnection();
      await waitFor(
        async () => (outstation.connections > connections && outstation.resent > 0 ? true : undefined),
        20_000,
        { what: 'a new connection with the unacknowledged frames sent again' },
      );
      await logged(/info: Information object \S+ sent a value with the same time tag again/);
      expect(await tagged()).toHaveLength(1);
      expect(JSON.stringify((await tagged())[0]!.meta)).toContain(at.toISOString());
    } finally {
      outstation.resendUnacknowledged = false;
    }
  });
});
