import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, expectStatus, login, type Credentials } from './support/identity.js';
import { createConnector } from './support/connectors.js';
import { insertDevice, processedPackets, statesOf } from './support/ingest-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { HEAT_METER_CODEC, WATER_METER_CODEC } from './support/ts013-codecs.js';

let t: TestApp;
let admin: Credentials;
let call: ReturnType<typeof caller>;

/** What the server logged, one JSON object a line: script console output is at debug level. */
let logged = '';
const logSink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    logged += chunk.toString();
    done();
  },
});

beforeAll(async () => {
  t = await createTestApp({ logger: pino({ level: 'debug' }, logSink) });
  admin = bearer(await login(t));
  call = caller(t, admin);
});
afterAll(() => t.close());

interface TestReply {
  values: Array<Record<string, unknown>>;
  states: Array<Record<string, unknown>>;
  warnings: string[];
  codecWarnings: string[];
  errors: string[];
  logs: string[];
}
interface PacketReply {
  status: string | null;
  error: string | null;
  warnings: string[];
}

const createDriver = async (code: string, variables?: Record<string, unknown>) =>
  expectStatus<{ id: string; parser: { code: string } }>(
    await call('POST', '/xapi/v1/device-drivers', {
      title: `codec ${Math.random().toString(36).slice(2, 8)}`,
      parser: { type: 'javascript', code, ...(variables ? { variables } : {}) },
      targetVariables: [
        { key: 'volume', type: 'number', unit: 'm³' },
        { key: 'battery.voltage', type: 'number', unit: 'V' },
      ],
    }),
    201,
  );

/** An uplink as The Things Stack v3 posts it (the fields that matter here). */
// Each uplink a new frame counter, as a device counts: a repeated one is flagged (frame-counter check).
let frameCounter = 7;
const ttsUplink = (devEui: string, fPort: number, bytes: number[]) => ({
  end_device_ids: { device_id: `eui-${devEui}`, dev_eui: devEui.toUpperCase() },
  received_at: '2026-05-01T10:00:00Z',
  uplink_message: {
    f_port: fPort,
    f_cnt: frameCounter++,
    frm_payload: Buffer.from(bytes).toString('base64'),
  },
});

/** A ChirpStack v3 codec in the style vendors published it (written for this test). */
const CHIRPSTACK_V3_METER = `
function Decode(fPort, bytes, variables) {
  if (fPort !== 2) throw new Error('no frame on port ' + fPort);
  return { volume: ((bytes[0] << 8) | bytes[1]) * variables.factor, battery: { voltage: bytes[2] / 50 } };
}
function Encode(fPort, obj, variables) {
  return [fPort, obj.interval >> 8, obj.interval & 0xff];
}`;

const INDEX_FRAME = [0x00, 0x01, 0xe2, 0x40, 0x00, 100]; // 123.456 m³, water, 3.0 V

describe('TS013 payload codecs as device drivers', () => {
  it('are stored unchanged through the API and decode samples by fPort', async () => {
    const driver = await createDriver(WATER_METER_CODEC, { serial: 'WM-1' });
    expect(driver.parser.code).toBe(WATER_METER_CODEC);
    const test = async (fPort: number, bytes: number[]) =>
      expectStatus<TestReply>(
        await call('POST', `/xapi/v1/device-drivers/${driver.id}/test`, {
          payload: { hex: Buffer.from(bytes).toString('hex') },
          meta: { fPort },
        }),
        200,
      );
    const index = await test(1, INDEX_FRAME);
    expect(index.states).toEqual([
      {
        volume: 123.456,
        medium: 'water',
        battery: { voltage: 3, low: true },
        meter: { serial: 'WM-1' },
        'battery.voltage': 3,
        'battery.low': true,
        'meter.serial': 'WM-1',
      },
    ]);
    expect(index.codecWarnings).toEqual(['battery voltage low: 3 V']);
    expect(index.logs).toEqual(['fPort 1 bytes 6']);
    const alarms = await test(2, [1, 4]);
    expect(alarms.states[0]).toEqual({
      alarms: [
        { code: 1, name: 'leak' },
        { code: 4, name: 'tamper' },
      ],
      'alarms.0.code': 1,
      'alarms.0.name': 'leak',
      'alarms.1.code': 4,
      'alarms.1.name': 'tamper',
      alarmCount: 2,
    });
    const unknown = await test(3, [1]);
    expect(unknown).toMatchObject({ values: [], errors: ['unknown FPort 3'] });
  });

  it('accept a script of 1 MiB through the API', async () => {
    const padding = `/* ${'lookup table '.repeat(80_000)} */\n`;
    const code = `${padding}${HEAT_METER_CODEC}`.padEnd(1024 * 1024, ' ');
    const driver = await createDriver(code);
    expect(driver.parser.code).toHaveLength(1024 * 1024);
    const tooLong = await call('POST', '/xapi/v1/device-drivers', {
      title: 'too long',
      parser: { type: 'javascript', code: `${code} ` },
    });
    expect(tooLong.statusCode, tooLong.body).toBe(422);
  });

  it('decode ingested The Things Stack uplinks into dotted states, keeping warnings on the packet', async () => {
    const driver = await createDriver(HEAT_METER_CODEC);
    const connector = await createConnector(t, admin, { type: 'tts-uplink' });
    const devEui = '70b3d57ed0000a01';
    const deviceId = await insertDevice(t, {
      connectorId: connector.id,
      deviceKey: devEui,
      driverId: driver.id,
    });
    const path = new URL(connector.apiEndpoint!).pathname;
    const post = (bytes: number[]) =>
      t.app.inject({ method: 'POST', url: path, payload: ttsUplink(devEui, 5, bytes) });
    expect((await post([0x21, 0x03, 0x01, 0xf4, 0x02, 0x58])).statusCode).toBe(202);
    expect((await post([0x99])).statusCode).toBe(202);
    const [decoded, refused] = await processedPackets(t, connector.id, 2);
    const scriptLines = logged
      .split('\n')
      .filter((line) => line.includes('driver script console output') && line.includes(deviceId));
    expect(scriptLines.map((line) => (JSON.parse(line) as { lines: string[] }).lines).sort()).toEqual([
      ['frame 153 of 1 bytes'],
      ['frame 33 of 6 bytes'],
    ]);
    expect(decoded).toMatchObject({ status: 'parsed', error: null });
    expect(refused).toMatchObject({
      status: 'parse-error',
      error: 'The codec reported: frame type 153 not supported',
    });
    const states = await statesOf(t, deviceId);
    expect(states).toMatchObject({
      'status.code': 3,
      'status.ok': false,
      'readings.0.value': 50,
      'readings.1.value': 60,
      receivedYear: new Date().getUTCFullYear(),
    });
    const history = expectStatus<{ data: PacketReply[] }>(
      await call('GET', `/xapi/v1/virtual-devices/${deviceId}/packets`),
      200,
    );
    expect(history.data.map((p) => ({ status: p.status, error: p.error, warnings: p.warnings }))).toEqual([
      { status: 'parse-error', error: 'The codec reported: frame type 153 not supported', warnings: [] },
      { status: 'parsed', error: null, warnings: ['meter reports status 3'] },
    ]);
  });

  it('decode ingested packets by the fPort of their metadata', async () => {
    const driver = await createDriver(WATER_METER_CODEC, { serial: 'from-driver' });
    const connector = await createConnector(t, admin, { type: 'tts-uplink' });
    const devEui = '70b3d57ed0000a02';
    const deviceId = await insertDevice(t, {
      connectorId: connector.id,
      deviceKey: devEui,
      driverId: driver.id,
    });
    const append = (bytes: number[], fPort?: number) =>
      t.services.packets.append({
        connectorId: connector.id,
        deviceKey: devEui,
        payload: Buffer.from(bytes),
        source: 'webhook',
        receivedAt: new Date(),
        ...(fPort === undefined ? {} : { meta: { fPort, fCnt: 7, devEui } }),
      });
    await append(INDEX_FRAME, 1);
    await append([1, 4], 2);
    // A packet whose connector knows no fPort: the codec says what it needs.
    await append(INDEX_FRAME);
    const rows = await processedPackets(t, connector.id, 3);
    expect(rows.map((r) => [r.status, r.error])).toEqual([
      ['parsed', null],
      ['parsed', null],
      ['parse-error', 'The codec reported: unknown FPort undefined'],
    ]);
    expect(await statesOf(t, deviceId)).toMatchObject({
      volume: 123.456,
      'battery.voltage': 3,
      'meter.serial': 'from-driver',
      'alarms.1.name': 'tamper',
      alarmCount: 2,
      '_meta.fPort': 2,
    });
  });

  it('encode downlink data with the codec, answering its errors as 422', async () => {
    const driver = await createDriver(WATER_METER_CODEC);
    const encode = (data: unknown) =>
      call('POST', `/xapi/v1/device-drivers/${driver.id}/encode-downlink`, { data });
    expect(expectStatus(await encode({ reportingIntervalMinutes: 360 }), 200)).toEqual({
      bytes: [0x01, 0x01, 0x68],
      hex: '010168',
      fPort: 10,
      warnings: [],
      logs: [],
    });
    const refused = expectStatus<{ error: { code: string; message: string } }>(
      await encode({ reportingIntervalMinutes: 0 }),
      422,
    );
    expect(refused.error).toMatchObject({
      code: 'DOWNLINK_ENCODE_FAILED',
      message: 'The codec refused the downlink: reportingIntervalMinutes must be 1-1440',
    });
    const heat = await createDriver(HEAT_METER_CODEC);
    const missing = await call('POST', `/xapi/v1/device-drivers/${heat.id}/encode-downlink`, { data: {} });
    expect(missing.statusCode, missing.body).toBe(422);
    expect(missing.body).toMatch(/does not define function encodeDownlink/);
  });

  it('run a ChirpStack v3 Decode/Encode pair unchanged on ingested packets and downlinks', async () => {
    const driver = await createDriver(CHIRPSTACK_V3_METER, { factor: 2 });
    const connector = await createConnector(t, admin, { type: 'tts-uplink' });
    const devEui = '70b3d57ed0000a03';
    const deviceId = await insertDevice(t, {
      connectorId: connector.id,
      deviceKey: devEui,
      driverId: driver.id,
    });
    for (const [bytes, fPort] of [
      [[0x00, 0x64, 0xa0], 2],
      [[0x07], 5],
    ] as const)
      await t.services.packets.append({
        connectorId: connector.id,
        deviceKey: devEui,
        payload: Buffer.from(bytes),
        source: 'webhook',
        receivedAt: new Date(),
        meta: { fPort, fCnt: fPort, devEui },
      });
    const rows = await processedPackets(t, connector.id, 2);
    expect(rows.map((r) => [r.status, r.error])).toEqual([
      ['parsed', null],
      ['parse-error', 'The parser script failed: Error: no frame on port 5'],
    ]);
    expect(await statesOf(t, deviceId)).toMatchObject({ volume: 200, 'battery.voltage': 3.2 });
    const encoded = await call('POST', `/xapi/v1/device-drivers/${driver.id}/encode-downlink`, {
      data: { interval: 60 },
      meta: { fPort: 10 },
    });
    expect(expectStatus(encoded, 200)).toMatchObject({ bytes: [10, 0, 60], fPort: null });
  });
});
