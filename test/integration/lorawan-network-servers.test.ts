import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, expectStatus, login, type Credentials } from './support/identity.js';
import { createConnector, packetsOf, type ConnectorBody } from './support/connectors.js';
import { processedPackets, statesOf } from './support/ingest-fixtures.js';
import {
  codecDriver,
  lorawanDevice,
  lorawanFixture,
  tapNetworkEvents,
  tapPackets,
} from './support/lorawan.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import type { IncomingPacket } from '../../server/src/ingest/ingest.types.js';

/**
 * The documented messages of The Things Stack, ChirpStack and LORIOT (test/fixtures/lorawan/),
 * posted unchanged to their kinds: what reaches the packet store and the devices, and which
 * downlink and gateway events and log entries they cause.
 */

const WEBHOOK_RATE_LIMIT = 12;
let t: TestApp;
let admin: Credentials;
let appended: IncomingPacket[];
let taps: ReturnType<typeof tapNetworkEvents>;

beforeAll(async () => {
  t = await createTestApp({ env: { STELLWERK_WEBHOOK_RATE_LIMIT: String(WEBHOOK_RATE_LIMIT) } });
  admin = bearer(await login(t));
  appended = tapPackets(t);
  taps = tapNetworkEvents(t);
});
afterAll(() => t.close());

const pathOf = (connector: ConnectorBody) => new URL(connector.apiEndpoint!).pathname;
const post = (url: string, payload: unknown) =>
  t.app.inject({ method: 'POST', url, payload: payload as object });
const accepted = async (url: string, payload: unknown, count: number) => {
  const response = await post(url, payload);
  expect(response.statusCode, response.body).toBe(202);
  expect(response.json()).toEqual({ accepted: count });
};
const sentTo = (connectorId: string) => appended.filter((p) => p.connectorId === connectorId);
const logsOf = async (connectorId: string) =>
  expectStatus<{ data: Array<{ level: string; message: string; details: Record<string, unknown> }> }>(
    await caller(t, admin)('GET', `/xapi/v1/connectors/${connectorId}/logs`),
    200,
  ).data;

const DOWNLINK_ID = '3f1e9a52-6b7c-4d8e-9f01-23456789abcd';

describe('The Things Stack webhook with the documented messages', () => {
  it('reads uplinks, filtered uplinks at their path, joins and downlink acks; a device id in upper case matches', async () => {
    const connector = await createConnector(t, admin, { type: 'tts-uplink' });
    const base = pathOf(connector);
    // The EUI as the TTS console shows it: stored lower-case, so every message finds the device.
    const device = await lorawanDevice(t, admin, {
      connectorId: connector.id,
      deviceId: '0004A30B001C0530',
      driverId: await codecDriver(t, admin),
    });
    expect(device.device_id).toBe('0004a30b001c0530');

    await accepted(`${base}/join`, lorawanFixture('tts-docs-join-accept'), 1);
    const ack = lorawanFixture('tts-docs-downlink-ack');
    (ack.downlink_ack as { correlation_ids: string[] }).correlation_ids.push(
      `stellwerk:downlink:${DOWNLINK_ID}`,
    );
    await accepted(base, ack, 0);
    await accepted(base, lorawanFixture('tts-docs-uplink'), 1);
    await processedPackets(t, connector.id, 2);
    expect(await statesOf(t, device.id)).toMatchObject({ size: 3, first: 0x82 });

    await accepted(`${base}/uplink?dev_eui=0004A30B001C0530`, lorawanFixture('tts-docs-filtered-uplink'), 1);
    const rows = await processedPackets(t, connector.id, 3);
    expect(rows.every((r) => r.status === 'parsed')).toBe(true);
    expect(await statesOf(t, device.id)).toMatchObject({ size: 2, first: 0x20 });

    const packets = await packetsOf(t, connector.id);
    expect(packets.map((p) => [p.device_key, p.payload.toString('base64')])).toEqual([
      ['0004a30b001c0530', ''],
      ['0004a30b001c0530', 'gkHe'],
      ['0004a30b001c0530', 'ICw='],
    ]);
    const [join, uplink, filtered] = sentTo(connector.id).map((p) => p.meta);
    expect(join).toEqual({
      event: 'join',
      devEui: '0004a30b001c0530',
      devAddr: '01497ecc',
      receivedAt: '2020-02-17T07:49:09.736532315Z',
    });
    expect(uplink).toMatchObject({
      fCnt: 1,
      receivedAt: '2020-02-12T15:15:45.789585559Z',
      gateways: [{ gatewayId: 'gtw1', gatewayEui: '9c5c8e00001a05c4', rssi: -35, snr: 5 }],
      spreadingFactor: 7,
      bandwidth: 125000,
      frequency: 868300000,
      decoded: { temperature: 1, luminosity: 0.64 },
    });
    expect(filtered).toMatchObject({ fPort: 1, gateways: [{ gatewayId: 'test', rssi: 42, snr: 4.2 }] });

    expect(taps.downlinks.filter((e) => e.connectorId === connector.id)).toEqual([
      expect.objectContaining({
        status: 'acknowledged',
        downlinkId: DOWNLINK_ID,
        deviceKey: '0004a30b001c0530',
      }),
    ]);
    expect(taps.gateways.filter((e) => e.connectorId === connector.id)).toEqual([
      expect.objectContaining({ gatewayEui: '9c5c8e00001a05c4', online: true }),
    ]);
  });

  it('answers 404 for message paths it does not know and for paths on plain webhooks', async () => {
    const tts = await createConnector(t, admin, { type: 'tts-uplink' });
    expect((await post(`${pathOf(tts)}/no-such-message`, lorawanFixture('tts-docs-uplink'))).statusCode).toBe(
      404,
    );
    const plain = await createConnector(t, admin, { type: 'webhook-in' });
    expect((await post(`${pathOf(plain)}/uplink`, { device_id: 'x' })).statusCode).toBe(404);
    expect(await packetsOf(t, tts.id)).toHaveLength(0);
    expect(await packetsOf(t, plain.id)).toHaveLength(0);
  });
});

describe('ChirpStack HTTP integration with the documented events', () => {
  it('stores up, join, status and location; turns ack and txack into downlink events and log into a log entry', async () => {
    const connector = await createConnector(t, admin, { type: 'chirpstack-uplink' });
    const base = pathOf(connector);
    const device = await lorawanDevice(t, admin, {
      connectorId: connector.id,
      deviceId: '0101010101010101',
      driverId: await codecDriver(t, admin),
    });
    const event = (name: string, count: number) =>
      accepted(`${base}?event=${name}`, lorawanFixture(`chirpstack-docs-${name}`), count);
    await event('join', 1);
    await event('status', 1);
    await event('location', 1);
    await event('ack', 0);
    await event('txack', 0);
    await event('log', 0);
    await event('integration', 0);
    await event('up', 1);
    await processedPackets(t, connector.id, 4);
    // The uplink came last: its bytes are what the device shows.
    expect(await statesOf(t, device.id)).toMatchObject({ size: 1, first: 0xaa });

    const packets = await packetsOf(t, connector.id);
    expect(packets.map((p) => p.payload.toString('hex'))).toEqual(['', '', '', 'aa']);
    expect(sentTo(connector.id).map((p) => p.meta)).toEqual([
      expect.objectContaining({ event: 'join', devAddr: '00189440' }),
      {
        event: 'status',
        devEui: '0101010101010101',
        battery: 88.3,
        margin: 10,
        receivedAt: '2022-07-18T09:35:06.927172638+00:00',
      },
      expect.objectContaining({
        event: 'location',
        location: { latitude: 37.344214, longitude: -8.839375, altitude: 2 },
      }),
      expect.objectContaining({
        fPort: 1,
        devAddr: '00189440',
        gateways: [{ gatewayEui: '0016c001f153a14c', rssi: -36, snr: 10.5 }],
        spreadingFactor: 11,
        frequency: 867100000,
        codingRate: '4/5',
      }),
    ]);
    expect(taps.downlinks.filter((e) => e.connectorId === connector.id)).toEqual([
      expect.objectContaining({ status: 'acknowledged', remoteId: '1bbcab1d-6ec6-4136-b3f5-d63be1dc08de' }),
      expect.objectContaining({ status: 'sent', remoteId: '42cb6459-a640-46ec-9623-bdff39dc4736' }),
    ]);
    expect(taps.gateways.filter((e) => e.connectorId === connector.id).map((e) => e.gatewayEui)).toEqual([
      '0016c001f153a14c',
      '0016c001f153a14c',
    ]);
    expect(await logsOf(connector.id)).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'ChirpStack: MIC of join-request is invalid, make sure keys are correct',
        details: expect.objectContaining({ code: 'UPLINK_MIC' }) as unknown,
      }),
    );
  });

  it('matches a device by its EUI when its device_id is another name', async () => {
    const connector = await createConnector(t, admin, { type: 'chirpstack-uplink' });
    // Unknown first: the cached "unknown" for the EUI must not outlive the device's creation.
    await accepted(`${pathOf(connector)}?event=up`, lorawanFixture('chirpstack-docs-up'), 1);
    await processedPackets(t, connector.id, 1);
    const device = expectStatus<{ id: string; device_id: string; devEui: string }>(
      await caller(t, admin)('POST', '/xapi/v1/virtual-devices', {
        device_id: 'pump-station-3',
        devEui: '0101010101010101',
        title: 'Pump station 3',
        connectorId: connector.id,
        deviceDriverId: await codecDriver(t, admin),
      }),
      201,
    );
    expect([device.device_id, device.devEui]).toEqual(['pump-station-3', '0101010101010101']);
    await accepted(`${pathOf(connector)}?event=up`, lorawanFixture('chirpstack-docs-up'), 1);
    const rows = await processedPackets(t, connector.id, 2);
    expect(rows.map((r) => r.status)).toEqual(['unknown-device', 'parsed']);
    expect(await statesOf(t, device.id)).toMatchObject({ size: 1, first: 0xaa });
  });

  it('refuses a request without an event type', async () => {
    const connector = await createConnector(t, admin, { type: 'chirpstack-uplink' });
    const response = await post(pathOf(connector), lorawanFixture('chirpstack-docs-up'));
    expect(response.statusCode).toBe(422);
    expect(await packetsOf(t, connector.id)).toHaveLength(0);
  });
});

describe('LORIOT HTTP push with the documented messages', () => {
  it('stores the rx uplink and reports the gateways of the gw message, storing the frame once', async () => {
    const connector = await createConnector(t, admin, { type: 'loriot-uplink' });
    const device = await lorawanDevice(t, admin, {
      connectorId: connector.id,
      deviceId: '0102030405060708',
      driverId: await codecDriver(t, admin),
    });
    await accepted(pathOf(connector), lorawanFixture('loriot-docs-rx'), 1);
    await accepted(pathOf(connector), lorawanFixture('loriot-docs-gw'), 0);
    await processedPackets(t, connector.id, 1);
    expect(await statesOf(t, device.id)).toMatchObject({ size: 4, first: 1 });
    expect(sentTo(connector.id).map((p) => p.meta)).toEqual([
      expect.objectContaining({ fPort: 1, fCnt: 1, receivedAt: '2016-08-10T17:37:55.433Z' }),
    ]);
    expect(taps.gateways.filter((e) => e.connectorId === connector.id)).toEqual([
      expect.objectContaining({
        gatewayEui: '7076ffffff053a13',
        online: true,
        location: { latitude: 57.013938, longitude: 9.9874619 },
      }),
    ]);
  });
});

describe('webhook rate limit', () => {
  it('applies per connector, but not to The Things Stack webhooks', async () => {
    const plain = await createConnector(t, admin, { type: 'webhook-in' });
    const tts = await createConnector(t, admin, { type: 'tts-uplink' });
    const codes = async (url: string, body: unknown) => {
      const seen: number[] = [];
      for (let i = 0; i <= WEBHOOK_RATE_LIMIT; i++) seen.push((await post(url, body)).statusCode);
      return seen;
    };
    const plainCodes = await codes(pathOf(plain), { device_id: 'x', v: 1 });
    expect(plainCodes.slice(0, WEBHOOK_RATE_LIMIT).every((c) => c === 202)).toBe(true);
    expect(plainCodes.at(-1)).toBe(429);
    const ttsCodes = await codes(`${pathOf(tts)}/join`, lorawanFixture('tts-docs-join-accept'));
    expect(ttsCodes.every((c) => c === 202)).toBe(true);
  });
});
