import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Connector } from '../../server/src/connectors/connector.entity.js';
import { FrameCounters } from '../../server/src/ingest/frame-counter.js';
import { PacketFeed } from '../../server/src/ingest/packet-feed.js';
import type { PacketMeta } from '../../server/src/ingest/packet-meta.js';
import type { PacketOutcome } from '../../server/src/ingest/parse-packet.stage.js';
import { bearer, caller, expectStatus, login, type Credentials } from './support/identity.js';
import { createConnector } from './support/connectors.js';
import { processedPackets, sql, statesOf } from './support/ingest-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { insertState, stateRows } from './support/twin-fixtures.js';
import { waitFor } from './support/wait.js';

/**
 * Network-server metadata on the ingest path: it reaches the driver (TS013 `fPort`, `recvTime`,
 * `variables`; `parse(bytes, meta)`), becomes `_meta.*` device states that health rules read, is
 * kept on the packet and shown in its history, and drives the frame-counter check.
 */

let t: TestApp;
let admin: Credentials;
let call: ReturnType<typeof caller>;

beforeAll(async () => {
  t = await createTestApp();
  admin = bearer(await login(t));
  call = caller(t, admin);
});
afterAll(() => t.close());

/** A codec that reports what it was given. */
const ECHO_CODEC = `
function decodeUplink(input) {
  if (input.fPort !== 3) return { errors: ['unknown FPort ' + input.fPort] };
  return { data: {
    port: input.fPort,
    year: input.recvTime.getUTCFullYear(),
    serial: input.variables.serial,
    site: input.variables.site,
    size: input.bytes.length
  } };
}`;

const PARSE_SCRIPT = `
function parse(bytes, meta) {
  return { port: meta.fPort, counter: meta.fCnt, best: meta.gateways[0].gatewayEui, recv: meta.recvTime, topic: meta.topic };
}`;

const GATEWAYS = [
  { gatewayId: 'gw-far', gatewayEui: 'b827ebfffe000002', rssi: -124, snr: -11.5 },
  { gatewayId: 'gw-near', gatewayEui: 'b827ebfffe000001', rssi: -121, snr: -7.25 },
];

const uplink = (fCnt: number, extra: PacketMeta = {}): PacketMeta => ({
  fPort: 3,
  fCnt,
  devEui: '70b3d57ed0000b01',
  receivedAt: '2031-05-01T10:00:00.000Z',
  gateways: GATEWAYS,
  dataRate: 'SF12BW125',
  spreadingFactor: 12,
  frequency: 868_100_000,
  ...extra,
});

async function createDriver(code: string, extra: Record<string, unknown> = {}) {
  return expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/device-drivers', {
      title: `meta ${Math.random().toString(36).slice(2, 8)}`,
      parser: { type: 'javascript', code, variables: { serial: 'from-driver', site: 'plant A' } },
      ...extra,
    }),
    201,
  ).id;
}

async function createDevice(connectorId: string, deviceKey: string, driverId: string | null, extra = {}) {
  return expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/virtual-devices', {
      device_id: deviceKey,
      title: deviceKey,
      connectorId,
      ...(driverId ? { deviceDriverId: driverId } : {}),
      ...extra,
    }),
    201,
  ).id;
}

const append = (connectorId: string, deviceKey: string, payload: Buffer, meta?: PacketMeta) =>
  t.services.packets.append({
    connectorId,
    deviceKey,
    payload,
    source: 'webhook',
    receivedAt: new Date(),
    ...(meta ? { meta } : {}),
  });

interface HistoryPacket {
  status: string | null;
  error: string | null;
  warnings: string[];
  meta: PacketMeta | null;
}

const history = async (deviceId: string) =>
  expectStatus<{ data: HistoryPacket[] }>(
    await call('GET', `/xapi/v1/virtual-devices/${deviceId}/packets`),
    200,
  ).data;

describe('packet metadata', () => {
  it('reaches a TS013 codec as fPort, recvTime and variables (driver settings under the device keyValueData)', async () => {
    const connector = await createConnector(t, admin, { type: 'tts-uplink' });
    const driverId = await createDriver(ECHO_CODEC);
    const deviceId = await createDevice(connector.id, '70b3d57ed0000b01', driverId, {
      keyValueData: { serial: 'WM-7' },
    });
    await append(connector.id, '70b3d57ed0000b01', Buffer.from([1, 2]), uplink(10));
    await append(connector.id, '70b3d57ed0000b01', Buffer.from([1]), { ...uplink(11), fPort: 9 });
    const [decoded, refused] = await processedPackets(t, connector.id, 2);
    expect(decoded).toMatchObject({ status: 'parsed', error: null });
    expect(refused).toMatchObject({ status: 'parse-error', error: 'The codec reported: unknown FPort 9' });
    const states = await statesOf(t, deviceId);
    expect(states).toMatchObject({ port: 3, year: 2031, serial: 'WM-7', site: 'plant A', size: 2 });
    // The refused packet still set its metadata and _raw.
    expect(states).toMatchObject({
      '_meta.fCnt': 11,
      '_meta.fPort': 9,
      '_meta.rssi': -121,
      '_meta.snr': -7.25,
      '_meta.gateway': 'b827ebfffe000001',
      '_meta.gatewayCount': 2,
      '_meta.dataRate': 'SF12BW125',
      '_meta.frequency': 868_100_000,
      '_meta.receivedAt': '2031-05-01T10:00:00.000Z',
      _raw: 'AQ==', // binary payloads are base64
    });
  });

  it('reaches parse(bytes, meta), is kept on the packet and shown in the history, and states are XAPI data', async () => {
    const connector = await createConnector(t, admin, { type: 'tts-uplink' });
    const driverId = await createDriver(PARSE_SCRIPT);
    const deviceId = await createDevice(connector.id, 'parse-1', driverId);
    const meta = uplink(5, { topic: 'v3/app/devices/parse-1/up' });
    await append(connector.id, 'parse-1', Buffer.from('x'), meta);
    await processedPackets(t, connector.id, 1);
    const states = expectStatus<{ data: Array<{ key: string; value: unknown }> }>(
      await call('GET', `/xapi/v1/virtual-devices/${deviceId}/states`),
      200,
    ).data;
    expect(Object.fromEntries(states.map((s) => [s.key, s.value]))).toMatchObject({
      port: 3,
      counter: 5,
      best: 'b827ebfffe000002',
      recv: '2031-05-01T10:00:00.000Z',
      topic: 'v3/app/devices/parse-1/up',
      '_meta.topic': 'v3/app/devices/parse-1/up',
      '_meta.gateways': GATEWAYS,
    });
    expect(await history(deviceId)).toEqual([
      expect.objectContaining({ status: 'parsed', warnings: [], meta }) as HistoryPacket,
    ]);
    // A pipeline that fell behind (or restarted) re-reads packets from the table: with their metadata.
    const [row] = await sql<{ id: string }>(t, 'SELECT id FROM packets WHERE connector_id = ?', [
      connector.id,
    ]);
    const pool = new pg.Pool({ connectionString: t.config.databaseUrl!, max: 1 });
    try {
      const feed = new PacketFeed(pool, { batchSize: 1, maxQueued: 1, maxQueuedBytes: 1024 });
      feed.startAt(BigInt(row!.id) - 1n);
      expect((await feed.next())[0]).toMatchObject({ deviceKey: 'parse-1', meta });
    } finally {
      await pool.end();
    }
  });

  it('of a join sets only _meta states: the driver does not run and _raw stays', async () => {
    const connector = await createConnector(t, admin, { type: 'tts-uplink' });
    const driverId = await createDriver(ECHO_CODEC);
    const deviceId = await createDevice(connector.id, 'join-1', driverId);
    await append(connector.id, 'join-1', Buffer.from([7]), uplink(1));
    await append(connector.id, 'join-1', Buffer.alloc(0), {
      event: 'join',
      devEui: 'aa',
      devAddr: '26011f00',
    });
    const rows = await processedPackets(t, connector.id, 2);
    expect(rows.map((r) => r.status)).toEqual(['parsed', 'parsed']);
    expect(await statesOf(t, deviceId)).toMatchObject({
      _raw: 'Bw==',
      size: 1,
      '_meta.event': 'join',
      '_meta.devAddr': '26011f00',
      '_meta.fCnt': 1,
    });
  });

  it('lets a health rule on _meta.rssi judge coverage', async () => {
    const connector = await createConnector(t, admin, { type: 'tts-uplink' });
    const driverId = await createDriver(ECHO_CODEC, {
      healthConfig: { rules: [{ state: '_meta.rssi', operator: '<', value: -120, result: 'Poor coverage' }] },
    });
    const deviceId = await createDevice(connector.id, 'coverage-1', driverId);
    const evaluate = async () =>
      expectStatus<{ healthState: string; healthReason: string }>(
        await call('POST', `/xapi/v1/virtual-devices/${deviceId}/health/evaluate`),
        200,
      );
    await append(connector.id, 'coverage-1', Buffer.from([1]), uplink(1));
    await processedPackets(t, connector.id, 1);
    expect(await evaluate()).toMatchObject({
      healthState: 'Poor coverage',
      healthReason: expect.stringContaining('_meta.rssi < -120') as string,
    });
    await append(
      connector.id,
      'coverage-1',
      Buffer.from([1]),
      uplink(2, { gateways: [{ gatewayEui: 'b827ebfffe000003', rssi: -80, snr: 9 }] }),
    );
    await processedPackets(t, connector.id, 2);
    expect(await evaluate()).toMatchObject({ healthState: 'Healthy' });
  });

  it('lets an event rule fire on _meta.rssi through a twin state', async () => {
    const connector = await createConnector(t, admin, { type: 'tts-uplink' });
    const deviceId = await createDevice(connector.id, 'coverage-2', null);
    const twinId = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/digital-twins', { title: 'Meter shaft 4' }),
      201,
    ).id;
    await insertState(t, twinId, 'rssi', {
      type: 'connector',
      connectorId: connector.id,
      deviceId,
      stateKey: '_meta.rssi',
    });
    t.services.stateEngine.definitionsChanged();
    const ruleId = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/rules', {
        title: 'Poor coverage',
        twinId,
        trigger: { type: 'event', conditions: [{ stateKey: 'rssi', operator: '<', value: -120 }] },
        commands: [{ type: 'alarm', message: '{{twin.title}}: RSSI {{states.rssi}} dBm' }],
      }),
      201,
    ).id;
    await append(connector.id, 'coverage-2', Buffer.from([1]), uplink(1));
    await waitFor(async () => ((await stateRows(t, twinId)).rssi?.value === -121 ? true : undefined), 10_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await t.services.ruleEngine.idle();
    const alarms = expectStatus<{ data: Array<{ message: string; source: { id: string } | null }> }>(
      await call('GET', '/xapi/v1/alarm-logs?pageSize=500'),
      200,
    ).data.filter((a) => a.source?.id === ruleId);
    expect(alarms.map((a) => a.message)).toEqual(['Meter shaft 4: RSSI -121 dBm']);
  });

  it('flags a repeated or reset frame counter on the packet and in the connector log, but processes it', async () => {
    const connector = await createConnector(t, admin, { type: 'tts-uplink' });
    const deviceId = await createDevice(connector.id, 'fcnt-1', null);
    for (const [fCnt, event] of [[10], [11], [11], [3], [0, 'join'], [0], [1]] as const) {
      await append(
        connector.id,
        'fcnt-1',
        Buffer.from([fCnt]),
        event ? { event, devEui: '70b3d57ed0000b01' } : uplink(fCnt),
      );
    }
    await processedPackets(t, connector.id, 7);
    const warnings = (await history(deviceId)).reverse().map((p) => p.warnings);
    expect(warnings).toEqual([
      [],
      [],
      ['Frame counter repeated: fCnt 11 was received before (a retransmission or a replayed frame)'],
      ['Frame counter reset: fCnt 3 after 11 (the device restarted or rejoined)'],
      [],
      [],
      [],
    ]);
    expect((await statesOf(t, deviceId))['_meta.fCnt']).toBe(1);
    const logs = await waitFor(async () => {
      const rows = await sql<{ message: string; details: { reason: string; fCnt: number } }>(
        t,
        `SELECT message, details FROM connector_logs WHERE connector_id = ? ORDER BY created_at`,
        [connector.id],
      );
      return rows.length >= 2 ? rows : undefined;
    }, 5_000);
    // Both entries are written by the same batch, so their order in the log is not defined.
    const byReason = new Map(logs.map((l) => [l.details.reason, l]));
    expect(logs).toHaveLength(2);
    expect(byReason.get('frame-counter-repeat')?.details.fCnt).toBe(11);
    expect(byReason.get('frame-counter-reset')?.details.fCnt).toBe(3);
    expect(byReason.get('frame-counter-reset')!.message).toMatch(
      /^Frame counter of device_id "fcnt-1" went back \(fCnt 3\)/,
    );

    // After a restart the check starts from the device's _meta.fCnt state; a replayed packet (at or
    // below the packet that set it) is not flagged again.
    const [last] = await sql<{ packet_id: string }>(
      t,
      `SELECT packet_id FROM device_states WHERE device_id = ? AND key = '_meta.fCnt'`,
      [deviceId],
    );
    const lastId = BigInt(last!.packet_id);
    const pool = new pg.Pool({ connectionString: t.config.databaseUrl!, max: 1 });
    try {
      const restarted = new FrameCounters(pool);
      const outcome = (id: bigint, fCnt: number): PacketOutcome => ({
        packet: {
          id,
          connectorId: connector.id,
          deviceKey: 'fcnt-1',
          payload: Buffer.alloc(0),
          source: 'webhook',
          receivedAt: new Date(),
          meta: uplink(fCnt),
        },
        device: {
          id: deviceId,
          accountId: t.rootAccountId,
          permissionScopeId: null,
          referenceId: null,
          driver: null,
        },
        status: 'parsed',
        error: null,
        updates: [],
      });
      const replayed = outcome(lastId, 1);
      const repeated = outcome(lastId + 1000n, 1);
      await restarted.check([replayed, repeated]);
      expect([replayed.frameCounter, repeated.frameCounter]).toEqual([undefined, 'repeat']);
    } finally {
      await pool.end();
    }
  });

  it('skips the frame-counter check when the connector says so', async () => {
    const connector = await createConnector(t, admin, { type: 'tts-uplink' });
    const em = t.orm.em.fork();
    const entity = await em.findOneOrFail(Connector, connector.id);
    entity.config = { ...entity.config, skipFrameCounterCheck: true };
    await em.flush();
    const deviceId = await createDevice(connector.id, 'fcnt-skip', null);
    for (const fCnt of [4, 4, 2]) await append(connector.id, 'fcnt-skip', Buffer.from([fCnt]), uplink(fCnt));
    await processedPackets(t, connector.id, 3);
    expect((await history(deviceId)).map((p) => p.warnings)).toEqual([[], [], []]);
    expect((await statesOf(t, deviceId))['_meta.fCnt']).toBe(2);
  });
});
