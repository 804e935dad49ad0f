import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DownlinkEvent } from '../../server/src/connectors/network-events.js';
import { createBrokerConnector, runMosquitto, startBrokerApp, type BrokerTestApp } from './support/broker.js';
import { createConnector } from './support/connectors.js';
import { startFakePeer, type FakePeer } from './support/fake-network-server.js';
import { bearer, caller, errorCode, expectStatus, login, type Credentials } from './support/identity.js';
import { WATER_METER_CODEC } from './support/ts013-codecs.js';
import { startMosquitto } from './support/mosquitto.js';
import { lorawanFixture } from './support/lorawan.js';
import { waitFor } from './support/wait.js';

/**
 * Downlinks end to end: queued through the API, delivered by the connector's kind (the embedded
 * broker to a real mosquitto_sub; The Things Stack and ChirpStack to a fake HTTP peer on loopback
 * that records the documented request and answers like the network server), and moved on by
 * network-server events.
 */

let t: BrokerTestApp;
let admin: Credentials;
let call: ReturnType<typeof caller>;

interface DownlinkBody {
  id: string;
  status: string;
  fPort: number | null;
  bytesHex: string;
  confirmed: boolean;
  error: string | null;
  remoteId: string | null;
  attempts: number;
  handedOverAt: string | null;
  sentAt: string | null;
  acknowledgedAt: string | null;
}

let peer: FakePeer;

beforeAll(async () => {
  t = await startBrokerApp();
  admin = bearer(await login(t));
  call = caller(t, admin);
  peer = await startFakePeer();
});
afterAll(async () => {
  await t?.services.downlinkQueue.stop();
  await peer?.close();
  await t?.closeAll();
});

const createDevice = async (body: Record<string, unknown>) =>
  expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/virtual-devices', { title: `d ${Math.random()}`, ...body }),
    201,
  );

const send = (deviceId: string, body: Record<string, unknown>) =>
  call('POST', `/xapi/v1/virtual-devices/${deviceId}/downlinks`, body);

const listOf = async (deviceId: string) =>
  expectStatus<{ data: DownlinkBody[]; meta: { total: number } }>(
    await call('GET', `/xapi/v1/virtual-devices/${deviceId}/downlinks`),
    200,
  );

const downlinkOf = async (deviceId: string, id: string) =>
  (await listOf(deviceId)).data.find((d) => d.id === id)!;

const waitForDownlink = (deviceId: string, id: string, done: (d: DownlinkBody) => boolean, what: string) =>
  waitFor(
    async () => {
      const d = await downlinkOf(deviceId, id);
      return done(d) ? d : undefined;
    },
    10_000,
    { what },
  );

/** Posts a network server's webhook message to a connector's URL; its events are applied before the reply. */
async function postWebhook(apiEndpoint: string, suffix: string, payload: unknown): Promise<void> {
  const response = await t.app.inject({
    method: 'POST',
    url: `${new URL(apiEndpoint).pathname}${suffix}`,
    payload: payload as object,
  });
  expect(response.statusCode, response.body).toBe(202);
}

const emit = (event: Omit<DownlinkEvent, 'type' | 'at'>) =>
  t.services.networkEvents.emit([{ type: 'downlink', at: new Date(), ...event }]);

describe('downlinks', () => {
  it('stay queued while no worker runs, and are delivered once it starts (the table is the queue)', async () => {
    const broker = await createBrokerConnector(t);
    const device = await createDevice({ connectorId: broker.connectorId, device_id: 'valve-1' });
    const queued = expectStatus<DownlinkBody>(await send(device.id, { fPort: 5, bytes: '0a0b' }), 202);
    expect(queued).toMatchObject({ status: 'queued', attempts: 0, fPort: 5, bytesHex: '0a0b' });
    await new Promise((r) => setTimeout(r, 300));
    expect((await downlinkOf(device.id, queued.id)).status).toBe('queued');

    const topic = `connectors/${broker.connectorId}/devices/valve-1/down`;
    const sub = runMosquitto('mosquitto_sub', [
      ...['-h', '127.0.0.1', '-p', String(t.mqttPort), '-u', broker.username, '-P', broker.password],
      ...['-t', topic, '-q', '1', '-C', '2', '-F', '%x', '-W', '10'],
    ]);
    // mosquitto_sub has subscribed once the broker counts its client.
    await waitFor(async () => (t.services.broker.clientCount(broker.connectorId) > 0 ? true : undefined));
    await new Promise((r) => setTimeout(r, 200));
    await t.services.downlinkQueue.start();
    const sent = await waitForDownlink(
      device.id,
      queued.id,
      (d) => d.status === 'sent',
      'the broker downlink',
    );
    expect(sent.sentAt).not.toBeNull();

    const base64 = expectStatus<DownlinkBody>(
      await send(device.id, { fPort: 6, bytes: 'AQID', encoding: 'base64', confirmed: true }),
      202,
    );
    expect(base64.bytesHex).toBe('010203');
    const result = await sub;
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual(['0a0b', '010203']);
  });

  it('are published on the external broker of an mqtt-in connector, on its downlink topic', async () => {
    const mosquitto = await startMosquitto(() => Promise.resolve(['allow_anonymous true']));
    let externalId = '';
    try {
      const external = await createConnector(t, admin, {
        type: 'mqtt-in',
        config: {
          url: `mqtt://127.0.0.1:${mosquitto.port}`,
          topics: ['meters/+/up'],
          downlinkTopic: 'meters/{deviceId}/down/{fPort}',
        },
      });
      externalId = external.id;
      await waitFor(async () => (t.services.mqttIn.isReady(external.id) ? true : undefined));
      const device = await createDevice({ connectorId: external.id, device_id: 'm-7' });
      const sub = runMosquitto('mosquitto_sub', [
        ...['-h', '127.0.0.1', '-p', String(mosquitto.port), '-t', 'meters/m-7/down/#'],
        ...['-C', '1', '-F', '%t %x', '-W', '10'],
      ]);
      await new Promise((r) => setTimeout(r, 500));
      // The topic names {fPort}: a downlink without one cannot be published there.
      const portless = await send(device.id, { bytes: 'beef' });
      expect(portless.statusCode).toBe(400);
      expect(errorCode(portless)).toBe('VALIDATION_ERROR');
      const queued = expectStatus<DownlinkBody>(await send(device.id, { fPort: 12, bytes: 'beef' }), 202);
      const result = await sub;
      expect(result.stdout.trim()).toBe('meters/m-7/down/12 beef');
      await waitForDownlink(device.id, queued.id, (d) => d.status === 'sent', 'the mqtt-in downlink');
    } finally {
      await t.services.mqttIn.stopClient(externalId);
      await mosquitto.stop();
    }
  });

  it('are delivered to The Things Stack through the webhook downlink API and follow its webhook events', async () => {
    const tts = await createConnector(t, admin, {
      type: 'tts-uplink',
      config: {
        applicationId: 'water-app',
        webhookId: 'stellwerk',
        apiUrl: peer.url,
        apiKey: 'NNSXS.TESTKEY',
      },
    });
    const device = await createDevice({
      connectorId: tts.id,
      device_id: '70b3d57ed0000001',
      devEui: '70B3D57ED0000001',
      endDeviceId: 'meter-1',
    });
    // A LoRaWAN network server needs the port.
    expect(errorCode(await send(device.id, { bytes: '01003c' }))).toBe('VALIDATION_ERROR');
    peer.requests.length = 0;
    const queued = expectStatus<DownlinkBody>(
      await send(device.id, { fPort: 10, bytes: '01003c', confirmed: true }),
      202,
    );
    const handed = await waitForDownlink(
      device.id,
      queued.id,
      (d) => d.handedOverAt !== null,
      'the TTS push',
    );
    expect(handed.status).toBe('queued');
    expect(peer.requests).toEqual([
      {
        method: 'POST',
        url: '/api/v3/as/applications/water-app/webhooks/stellwerk/devices/meter-1/down/push',
        authorization: 'Bearer NNSXS.TESTKEY',
        body: {
          downlinks: [
            {
              f_port: 10,
              frm_payload: Buffer.from([1, 0, 60]).toString('base64'),
              confirmed: true,
              priority: 'NORMAL',
              correlation_ids: [`stellwerk:downlink:${queued.id}`],
            },
          ],
        },
      },
    ]);

    // The Things Stack's webhook reports sending and the acknowledgement, echoing the correlation id.
    const ids = { device_id: 'meter-1', dev_eui: '70B3D57ED0000001' };
    const correlation = [`stellwerk:downlink:${queued.id}`];
    await postWebhook(tts.apiEndpoint!, '', {
      end_device_ids: ids,
      correlation_ids: ['as:downlink:01E19B99501X84X6CV471TVSZ1', ...correlation],
      received_at: new Date().toISOString(),
      downlink_sent: { f_port: 10, frm_payload: 'AQA8', confirmed: true, correlation_ids: correlation },
    });
    expect((await downlinkOf(device.id, queued.id)).status).toBe('sent');
    const ack = lorawanFixture('tts-docs-downlink-ack') as {
      end_device_ids: unknown;
      downlink_ack: { correlation_ids: string[] };
    };
    ack.end_device_ids = ids;
    ack.downlink_ack.correlation_ids.push(...correlation);
    await postWebhook(tts.apiEndpoint!, '', ack);
    const acked = await downlinkOf(device.id, queued.id);
    expect(acked.status).toBe('acknowledged');
    expect(acked.acknowledgedAt).not.toBeNull();
    // An ended downlink stays as it ended.
    await emit({
      connectorId: tts.id,
      deviceKey: '70b3d57ed0000001',
      status: 'failed',
      downlinkId: queued.id,
    });
    expect((await downlinkOf(device.id, queued.id)).status).toBe('acknowledged');

    // A nack without an id that Stellwerk knows fails the oldest sent one of that device.
    const second = expectStatus<DownlinkBody>(await send(device.id, { fPort: 11, bytes: 'ff' }), 202);
    await waitForDownlink(device.id, second.id, (d) => d.handedOverAt !== null, 'the second push');
    await emit({ connectorId: tts.id, deviceKey: '70b3d57ed0000001', status: 'sent' });
    await emit({ connectorId: tts.id, deviceKey: '70b3d57ed0000001', status: 'failed', reason: 'nack' });
    expect(await downlinkOf(device.id, second.id)).toMatchObject({ status: 'failed', error: 'nack' });
  });

  it('are enqueued at ChirpStack through its device queue API, and its queue item id follows its integration events', async () => {
    const chirpstack = await createConnector(t, admin, {
      type: 'chirpstack-uplink',
      config: { apiUrl: `${peer.url}/rest/`, apiToken: 'cs-token' },
    });
    const device = await createDevice({ connectorId: chirpstack.id, device_id: '0101010101010101' });
    peer.requests.length = 0;
    const remoteId = '5e3d6b6a-1111-4c5e-9a3a-7d7c8f0e0a01';
    peer.replies.push({ status: 200, body: { id: remoteId } });
    const queued = expectStatus<DownlinkBody>(await send(device.id, { fPort: 2, bytes: 'cafe' }), 202);
    const handed = await waitForDownlink(
      device.id,
      queued.id,
      (d) => d.remoteId !== null,
      'the ChirpStack enqueue',
    );
    expect(handed).toMatchObject({ status: 'queued', remoteId });
    expect(peer.requests).toEqual([
      {
        method: 'POST',
        url: '/rest/api/devices/0101010101010101/queue',
        authorization: 'Bearer cs-token',
        body: { queueItem: { devEui: '0101010101010101', confirmed: false, fPort: 2, data: 'yv4=' } },
      },
    ]);
    // ChirpStack's HTTP integration reports the transmission (txack) and a missing acknowledgement (ack).
    const txack = lorawanFixture('chirpstack-docs-txack');
    txack.queueItemId = remoteId;
    await postWebhook(chirpstack.apiEndpoint!, '?event=txack', txack);
    expect((await downlinkOf(device.id, queued.id)).status).toBe('sent');
    const ack = lorawanFixture('chirpstack-docs-ack');
    Object.assign(ack, { queueItemId: remoteId, acknowledged: false });
    await postWebhook(chirpstack.apiEndpoint!, '?event=ack', ack);
    expect(await downlinkOf(device.id, queued.id)).toMatchObject({
      status: 'failed',
      error: 'not acknowledged by the device',
    });
  });

  it('are retried after transient failures and fail with the reason after a refusal', async () => {
    const chirpstack = await createConnector(t, admin, {
      type: 'chirpstack-uplink',
      config: { apiUrl: peer.url, apiToken: 'cs-token' },
    });
    const device = await createDevice({ connectorId: chirpstack.id, device_id: '0202020202020202' });
    peer.replies.push({ status: 503, body: { message: 'busy' } }, { status: 200, body: { id: 'q-2' } });
    const retried = expectStatus<DownlinkBody>(await send(device.id, { fPort: 3, bytes: '00' }), 202);
    const handed = await waitForDownlink(
      device.id,
      retried.id,
      (d) => d.remoteId !== null,
      'the retried enqueue',
    );
    expect(handed).toMatchObject({ status: 'queued', attempts: 2, remoteId: 'q-2', error: null });

    peer.replies.push({ status: 400, body: { code: 3, message: 'fPort must be > 0' } });
    const refused = expectStatus<DownlinkBody>(await send(device.id, { fPort: 4, bytes: '00' }), 202);
    const failed = await waitForDownlink(device.id, refused.id, (d) => d.status === 'failed', 'the refusal');
    expect(failed.attempts).toBe(1);
    expect(failed.error).toContain('answered 400: fPort must be > 0');
  });

  it("encode data with the device driver's codec; its errors and missing encoders are 422", async () => {
    const broker = await createBrokerConnector(t);
    const driver = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/device-drivers', {
        title: 'water codec',
        parser: { type: 'javascript', code: WATER_METER_CODEC },
      }),
      201,
    );
    const device = await createDevice({
      connectorId: broker.connectorId,
      device_id: 'meter-x',
      deviceDriverId: driver.id,
    });
    const encoded = expectStatus<DownlinkBody>(
      await send(device.id, { data: { reportingIntervalMinutes: 60 } }),
      202,
    );
    expect(encoded).toMatchObject({ fPort: 10, bytesHex: '01003c' });

    const refused = await send(device.id, { data: { reportingIntervalMinutes: 0 } });
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toMatchObject({
      error: {
        code: 'DOWNLINK_ENCODE_FAILED',
        details: [{ message: 'reportingIntervalMinutes must be 1-1440' }],
      },
    });

    const bare = await createDevice({ connectorId: broker.connectorId, device_id: 'bare' });
    expect(errorCode(await send(bare.id, { data: { on: true } }))).toBe('DEVICE_HAS_NO_DRIVER');
    expect(errorCode(await send(bare.id, { fPort: 1, bytes: '01', data: {} }))).toBe('VALIDATION_ERROR');
    expect(errorCode(await send(bare.id, { fPort: 1, bytes: 'xyz' }))).toBe('VALIDATION_ERROR');
    expect((await send(bare.id, { fPort: 224, bytes: '01' })).statusCode).toBe(400);
    // The embedded broker carries no port: none is needed, and none is stored.
    expect(expectStatus<DownlinkBody>(await send(bare.id, { bytes: '01' }), 202).fPort).toBeNull();

    const parseOnly = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/device-drivers', {
        title: 'parse only',
        parser: { type: 'javascript', code: 'function parse(bytes) { return { v: bytes[0] }; }' },
      }),
      201,
    );
    const old = await createDevice({
      connectorId: broker.connectorId,
      device_id: 'old',
      deviceDriverId: parseOnly.id,
    });
    expect(errorCode(await send(old.id, { fPort: 1, data: { v: 1 } }))).toBe('DOWNLINK_ENCODER_MISSING');

    const hooked = await createConnector(t, admin, { type: 'webhook-in' });
    const plain = await createDevice({ connectorId: hooked.id, device_id: 'plain' });
    expect(errorCode(await send(plain.id, { fPort: 1, bytes: '01' }))).toBe('DOWNLINK_NOT_SUPPORTED');
  });
});
