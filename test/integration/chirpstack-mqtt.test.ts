import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, expectStatus, login, type Credentials } from './support/identity.js';
import { createConnector, packetsOf } from './support/connectors.js';
import { processedPackets, statesOf } from './support/ingest-fixtures.js';
import {
  codecDriver,
  lorawanDevice,
  lorawanFixture,
  tapNetworkEvents,
  tapPackets,
} from './support/lorawan.js';
import { mosquittoPub, startMosquitto, type Mosquitto } from './support/mosquitto.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait.js';
import type { IncomingPacket } from '../../server/src/ingest/ingest.types.js';

/** ChirpStack's MQTT integration through a real Mosquitto standing in for the broker ChirpStack publishes to. */

let t: TestApp;
let admin: Credentials;
let broker: Mosquitto;
let appended: IncomingPacket[];
let taps: ReturnType<typeof tapNetworkEvents>;

beforeAll(async () => {
  t = await createTestApp();
  admin = bearer(await login(t));
  appended = tapPackets(t);
  taps = tapNetworkEvents(t);
  broker = await startMosquitto(() => Promise.resolve(['allow_anonymous true']));
});
afterAll(async () => {
  await t?.close();
  await broker?.stop();
});

const APPLICATION = '17c82e96-be03-4f38-aef3-f83d48582d97';
const DEVICE = '0101010101010101';
const publish = (application: string, event: string, body: unknown) =>
  mosquittoPub([
    '-p',
    String(broker.port),
    '-q',
    '1',
    '-t',
    `application/${application}/device/${DEVICE}/event/${event}`,
    '-m',
    JSON.stringify(body),
  ]);

describe('chirpstack-mqtt', () => {
  it('subscribes to its application’s events: uplinks and status become packets, acks downlink events, logs log entries', async () => {
    const connector = await createConnector(t, admin, {
      type: 'chirpstack-mqtt',
      config: { url: `mqtt://127.0.0.1:${broker.port}`, applicationId: APPLICATION, qos: 1 },
    });
    const device = await lorawanDevice(t, admin, {
      connectorId: connector.id,
      deviceId: DEVICE,
      driverId: await codecDriver(t, admin),
    });
    await waitFor(async () => (t.services.mqttIn.isReady(connector.id) ? true : undefined), 10_000, {
      what: 'chirpstack-mqtt subscription',
    });
    // Another application's events are not this connector's.
    await publish('another-application', 'up', lorawanFixture('chirpstack-docs-up'));
    await publish(APPLICATION, 'status', lorawanFixture('chirpstack-docs-status'));
    await publish(APPLICATION, 'ack', lorawanFixture('chirpstack-docs-ack'));
    await publish(APPLICATION, 'log', lorawanFixture('chirpstack-docs-log'));
    await publish(APPLICATION, 'up', lorawanFixture('chirpstack-docs-up'));
    await processedPackets(t, connector.id, 2);
    expect(await statesOf(t, device.id)).toMatchObject({ size: 1, first: 0xaa });
    expect((await packetsOf(t, connector.id)).map((p) => [p.device_key, p.payload.toString('hex')])).toEqual([
      [DEVICE, ''],
      [DEVICE, 'aa'],
    ]);
    const topic = (event: string) => `application/${APPLICATION}/device/${DEVICE}/event/${event}`;
    expect(appended.filter((p) => p.connectorId === connector.id).map((p) => p.meta)).toEqual([
      expect.objectContaining({ event: 'status', battery: 88.3, margin: 10, topic: topic('status') }),
      expect.objectContaining({ fPort: 1, frequency: 867100000, topic: topic('up') }),
    ]);
    expect(taps.downlinks).toEqual([
      expect.objectContaining({
        connectorId: connector.id,
        deviceKey: DEVICE,
        status: 'acknowledged',
        remoteId: '1bbcab1d-6ec6-4136-b3f5-d63be1dc08de',
      }),
    ]);
    const logs = expectStatus<{ data: Array<{ level: string; message: string }> }>(
      await caller(t, admin)('GET', `/xapi/v1/connectors/${connector.id}/logs`),
      200,
    ).data.map((l) => `${l.level}: ${l.message}`);
    expect(logs).toContain('error: ChirpStack: MIC of join-request is invalid, make sure keys are correct');
  });
});
