import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, caller, expectStatus, login, type Credentials } from './support/identity.js';
import { createConnector, type ConnectorBody } from './support/connectors.js';
import { processedPackets, statesOf } from './support/ingest-fixtures.js';
import { lorawanDevice, lorawanFixture } from './support/lorawan.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * The documented network-server messages as device states once packet metadata travels through
 * the ingest path: `_meta.*` states, fPort reaching the codec, and join/status/ack messages
 * changing only what they stand for.
 */

let t: TestApp;
let admin: Credentials;

beforeAll(async () => {
  t = await createTestApp();
  admin = bearer(await login(t));
});
afterAll(() => t.close());

/** A TS013 codec that shows the bytes and the fPort it was given. */
const PORT_CODEC = `function decodeUplink(input) {
  return { data: { size: input.bytes.length, port: input.fPort } };
}`;

const driver = async () =>
  expectStatus<{ id: string }>(
    await caller(t, admin)('POST', '/xapi/v1/device-drivers', {
      title: `port ${Math.random().toString(36).slice(2, 8)}`,
      parser: { type: 'javascript', code: PORT_CODEC },
    }),
    201,
  ).id;

const pathOf = (connector: ConnectorBody) => new URL(connector.apiEndpoint!).pathname;
const accepted = async (url: string, payload: unknown) => {
  const response = await t.app.inject({ method: 'POST', url, payload: payload as object });
  expect(response.statusCode, response.body).toBe(202);
};

describe('LoRaWAN metadata as device states', () => {
  it('The Things Stack: uplink metadata as _meta states, fPort in the codec; a join changes only join facts', async () => {
    const connector = await createConnector(t, admin, { type: 'tts-uplink' });
    const device = await lorawanDevice(t, admin, {
      connectorId: connector.id,
      deviceId: '0004A30B001C0530',
      driverId: await driver(),
    });
    await accepted(
      `${pathOf(connector)}/uplink?dev_eui=0004A30B001C0530`,
      lorawanFixture('tts-docs-filtered-uplink'),
    );
    await processedPackets(t, connector.id, 1);
    const afterUplink = await statesOf(t, device.id);
    expect(afterUplink).toMatchObject({
      size: 2,
      port: 1,
      '_meta.fPort': 1,
      '_meta.rssi': 42,
      '_meta.snr': 4.2,
      '_meta.gateway': 'test',
      '_meta.gatewayCount': 1,
      '_meta.spreadingFactor': 7,
      '_meta.bandwidth': 125000,
      '_meta.frequency': 868000000,
    });

    await accepted(`${pathOf(connector)}/join`, lorawanFixture('tts-docs-join-accept'));
    await processedPackets(t, connector.id, 2);
    const afterJoin = await statesOf(t, device.id);
    expect(afterJoin).toMatchObject({ '_meta.event': 'join', '_meta.devAddr': '01497ecc' });
    // The driver did not run: its states and the raw payload are as the uplink left them.
    expect(afterJoin.size).toBe(2);
    expect(afterJoin.port).toBe(1);
    expect(afterJoin._raw).toEqual(afterUplink._raw);
  });

  it('ChirpStack: a status message sets battery and margin only; an ack changes nothing', async () => {
    const connector = await createConnector(t, admin, { type: 'chirpstack-uplink' });
    const device = await lorawanDevice(t, admin, {
      connectorId: connector.id,
      deviceId: '0101010101010101',
      driverId: await driver(),
    });
    await accepted(`${pathOf(connector)}?event=up`, lorawanFixture('chirpstack-docs-up'));
    await processedPackets(t, connector.id, 1);
    const afterUp = await statesOf(t, device.id);
    expect(afterUp).toMatchObject({
      size: 1,
      port: 1,
      '_meta.rssi': -36,
      '_meta.snr': 10.5,
      '_meta.gateway': '0016c001f153a14c',
      '_meta.devAddr': '00189440',
      '_meta.codingRate': '4/5',
    });

    await accepted(`${pathOf(connector)}?event=status`, lorawanFixture('chirpstack-docs-status'));
    await processedPackets(t, connector.id, 2);
    const afterStatus = await statesOf(t, device.id);
    const changed = Object.keys(afterStatus).filter(
      (key) => JSON.stringify(afterStatus[key]) !== JSON.stringify(afterUp[key]),
    );
    expect(changed.sort()).toEqual(
      ['_meta.battery', '_meta.event', '_meta.margin', '_meta.receivedAt'].sort(),
    );
    expect(afterStatus).toMatchObject({ '_meta.battery': 88.3, '_meta.margin': 10 });

    await accepted(`${pathOf(connector)}?event=ack`, lorawanFixture('chirpstack-docs-ack'));
    await accepted(`${pathOf(connector)}?event=txack`, lorawanFixture('chirpstack-docs-txack'));
    await processedPackets(t, connector.id, 2);
    expect(await statesOf(t, device.id)).toEqual(afterStatus);
  });
});
