import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Connector } from '../connector.entity.js';
import { chirpstackEvent } from './chirpstack.js';
import { chirpstackMqttKind, chirpstackReader, chirpstackTopics } from './chirpstack-mqtt.kind.js';
import { settingsValidator } from './derive.js';

const fixture = (event: string) =>
  JSON.parse(
    readFileSync(
      new URL(`../../../../test/fixtures/lorawan/chirpstack-docs-${event}.json`, import.meta.url),
      'utf8',
    ),
  ) as Record<string, unknown>;
const read = (event: string, body: unknown = fixture(event)) => chirpstackEvent(event, body, 'c1');
const DEVICE = '0101010101010101';

describe('ChirpStack v4 events', () => {
  it('reads the documented up event: bytes, metadata, gateway heard', () => {
    const { items, events, logs } = read('up');
    expect(logs).toEqual([]);
    expect(items).toEqual([
      {
        deviceKey: DEVICE,
        payload: Buffer.from([0xaa]),
        meta: {
          devEui: DEVICE,
          fPort: 1,
          // Left out at their zero value: frame counter 0, unconfirmed.
          fCnt: 0,
          confirmed: false,
          devAddr: '00189440',
          receivedAt: '2022-07-18T09:34:15.775023242+00:00',
          gateways: [{ gatewayEui: '0016c001f153a14c', rssi: -36, snr: 10.5 }],
          dataRate: 1,
          spreadingFactor: 11,
          bandwidth: 125000,
          frequency: 867100000,
          codingRate: '4/5',
        },
      },
    ]);
    expect(events).toEqual([
      {
        type: 'gateway',
        connectorId: 'c1',
        gatewayEui: '0016c001f153a14c',
        online: true,
        at: new Date('2022-07-18T09:34:15.775Z'),
      },
    ]);
  });

  it('reads the zero values an up event leaves out and every modulation', () => {
    const up = (fields: Record<string, unknown>) =>
      read('up', {
        time: '2024-05-01T10:00:00.125421Z',
        deviceInfo: { deviceName: 'meter', devEui: DEVICE, tags: { floor: '2' } },
        devAddr: '01ab23cd',
        fPort: 3,
        data: 'AQI=',
        rxInfo: [{ gatewayId: '0016c001f153a14c', rssi: -61, crcStatus: 'CRC_OK' }],
        ...fields,
      });
    const lora = (codeRate: string, bandwidth = 125000) => ({
      frequency: 868100000,
      modulation: { lora: { bandwidth, spreadingFactor: 12, codeRate } },
    });
    // fCnt 0, dr 0 (SF12 in EU868), unconfirmed and SNR 0 are all left out.
    expect(up({ txInfo: lora('CR_4_5') }).items[0]!.meta).toMatchObject({
      fCnt: 0,
      dataRate: 0,
      confirmed: false,
      spreadingFactor: 12,
      codingRate: '4/5',
      gateways: [{ gatewayEui: '0016c001f153a14c', rssi: -61, snr: 0 }],
    });
    expect(up({ txInfo: lora('CR_LI_4_8', 812000) }).items[0]!.meta).toMatchObject({
      bandwidth: 812000,
      codingRate: '4/8LI',
    });
    const lrFhss = {
      frequency: 868130000,
      modulation: { lrFhss: { operatingChannelWidth: 137000, codeRate: 'CR_1_3' } },
    };
    expect(up({ dr: 8, txInfo: lrFhss }).items[0]!.meta).toMatchObject({
      dataRate: 8,
      bandwidth: 137000,
      codingRate: '1/3',
    });
    const fsk = { frequency: 868800000, modulation: { fsk: { frequencyDeviation: 25000, datarate: 50000 } } };
    const fskMeta = up({ dr: 7, txInfo: fsk }).items[0]!.meta!;
    expect(fskMeta).toMatchObject({ dataRate: 7, frequency: 868800000 });
    expect(fskMeta.gateways).toEqual([{ gatewayEui: '0016c001f153a14c', rssi: -61 }]);
    expect(fskMeta.spreadingFactor).toBeUndefined();
    // An empty frame on an application port is the device's message; without a port it is MAC-only.
    const empty = up({ data: undefined, txInfo: lora('CR_4_5') });
    expect(empty.items.map((i) => [i.payload.length, i.meta!.fPort])).toEqual([[0, 3]]);
    const macOnly = up({ data: undefined, fPort: undefined, txInfo: lora('CR_4_5') });
    expect(macOnly.items).toEqual([]);
    expect(macOnly.events).toEqual([expect.objectContaining({ gatewayEui: '0016c001f153a14c' })]);
  });

  it('reads a status without margin as margin 0', () => {
    const status = { time: '2024-05-01T09:00:00Z', deviceInfo: { devEui: DEVICE }, batteryLevel: 55.5 };
    expect(read('status', status).items[0]!.meta).toMatchObject({ battery: 55.5, margin: 0 });
  });

  it('turns join, status and location into packets without payload carrying only their facts', () => {
    const receivedAt = (event: string) => fixture(event).time;
    expect(read('join').items).toEqual([
      {
        deviceKey: DEVICE,
        payload: Buffer.alloc(0),
        meta: { event: 'join', devEui: DEVICE, devAddr: '00189440', receivedAt: receivedAt('join') },
      },
    ]);
    expect(read('status').items[0]!.meta).toEqual({
      event: 'status',
      devEui: DEVICE,
      battery: 88.3,
      margin: 10,
      receivedAt: receivedAt('status'),
    });
    expect(read('location').items[0]!.meta).toEqual({
      event: 'location',
      devEui: DEVICE,
      location: { latitude: 37.344214, longitude: -8.839375, altitude: 2 },
      receivedAt: receivedAt('location'),
    });
  });

  it('turns ack and txack into downlink events by queue item id, and no packets', () => {
    const ack = read('ack');
    expect(ack.items).toEqual([]);
    expect(ack.events).toEqual([
      {
        type: 'downlink',
        connectorId: 'c1',
        deviceKey: DEVICE,
        status: 'acknowledged',
        remoteId: '1bbcab1d-6ec6-4136-b3f5-d63be1dc08de',
        fCnt: 3,
        at: new Date('2022-07-18T09:38:49.235Z'),
      },
    ]);
    const nack = read('ack', { ...fixture('ack'), acknowledged: false });
    expect(nack.events[0]).toMatchObject({ status: 'failed', reason: 'not acknowledged by the device' });
    const txack = read('txack');
    expect(txack.items).toEqual([]);
    expect(txack.events).toEqual([
      expect.objectContaining({
        type: 'downlink',
        status: 'sent',
        remoteId: '42cb6459-a640-46ec-9623-bdff39dc4736',
        fCnt: 2,
      }),
      expect.objectContaining({ type: 'gateway', gatewayEui: '0016c001f153a14c', online: true }),
    ]);
  });

  it('turns log events into connector log entries at their level, and ignores integration events', () => {
    expect(read('log')).toEqual({
      items: [],
      events: [],
      logs: [
        {
          level: 'error',
          message: 'ChirpStack: MIC of join-request is invalid, make sure keys are correct',
          details: {
            code: 'UPLINK_MIC',
            deviceId: DEVICE,
            context: { deduplication_id: '4e91db13-5ce3-4c8c-ab0f-dfc626cf0771' },
          },
        },
      ],
    });
    expect(read('integration')).toEqual({ items: [], events: [], logs: [] });
  });

  it('refuses events without a device or with a broken payload', () => {
    expect(() => read('up', { data: 'qg==' })).toThrow(/deviceInfo.devEui/);
    expect(() => read('up', { ...fixture('up'), data: '!!' })).toThrow(/base64/);
  });
});

describe('chirpstack-mqtt kind', () => {
  const connector = Object.assign(new Connector(), { id: 'c1', config: {} });

  it('subscribes to the event topics of one application or of all', () => {
    expect(chirpstackTopics({})).toEqual(['application/+/device/+/event/+']);
    expect(chirpstackTopics({ applicationId: 'app-1' })).toEqual(['application/app-1/device/+/event/+']);
  });

  it('reads the event from the topic', () => {
    const topic = `application/17c82e96/device/${DEVICE}/event/status`;
    const message = chirpstackReader.read(topic, Buffer.from(JSON.stringify(fixture('status'))), connector);
    expect(message.items[0]!.meta).toMatchObject({ event: 'status', battery: 88.3, margin: 10 });
    expect(() => chirpstackReader.read('application/x/up', Buffer.from('{}'), connector)).toThrow(/topic/);
    expect(() => chirpstackReader.read(topic, Buffer.from('\x08\x01'), connector)).toThrow(/JSON/);
  });

  it('validates its settings like an mqtt-in broker plus the application id', () => {
    const validate = settingsValidator(chirpstackMqttKind);
    expect(validate({ url: 'mqtt://broker:1883', applicationId: 'app-1', apiToken: 'x' })).toEqual([]);
    expect(validate({ url: 'http://broker', applicationId: 'a/+' })).toEqual([
      {
        path: '/config/url',
        keyword: 'format',
        params: { format: 'mqtt-url' },
        message: 'must be an mqtt://, mqtts://, ws:// or wss:// URL with a host',
      },
      {
        path: '/config/applicationId',
        keyword: 'format',
        params: { format: 'mqtt-topic-level' },
        message: 'must be one topic level (no /, + or #)',
      },
    ]);
    expect(
      validate({ url: 'mqtt://broker', applicationId: 'a', clientCert: '-----BEGIN CERTIFICATE-----' }),
    ).toEqual([
      {
        path: '/config/clientKey',
        keyword: 'dependentRequired',
        params: { property: 'clientCert', missingProperty: 'clientKey' },
        message: 'clientCert and clientKey go together',
      },
    ]);
  });
});
