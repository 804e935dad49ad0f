import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Connector } from '../connector.entity.js';
import { settingsValidator } from './derive.js';
import { ttsMessage, ttsUplinkKind } from './tts-uplink.kind.js';

const fixture = (name: string) =>
  JSON.parse(
    readFileSync(new URL(`../../../../test/fixtures/lorawan/${name}.json`, import.meta.url), 'utf8'),
  ) as Record<string, unknown>;
const connector = (config: Record<string, unknown> = {}) =>
  Object.assign(new Connector(), { id: 'c1', config });
const read = (
  body: unknown,
  path = '',
  query: Record<string, string> = {},
  config?: Record<string, unknown>,
) => ttsMessage(body, connector(config), { path, query });

const DOWNLINK = '6f1c7b1e-3a1d-4c5e-9f00-0123456789ab';

describe('tts-uplink kind', () => {
  it('reads the documented uplink: bytes, fPort, frame counter, gateways, radio and decoded payload', () => {
    const { items, events } = read(fixture('tts-docs-uplink'));
    expect(items).toHaveLength(1);
    expect(items[0]!.deviceKey).toBe('0004a30b001c0530');
    expect([...items[0]!.payload]).toEqual([...Buffer.from('gkHe', 'base64')]);
    expect(items[0]!.meta).toEqual({
      devEui: '0004a30b001c0530',
      devAddr: '00bcb929',
      fCnt: 1,
      // A complete message leaves out `confirmed` when it is false.
      confirmed: false,
      receivedAt: '2020-02-12T15:15:45.789585559Z',
      gateways: [{ gatewayId: 'gtw1', gatewayEui: '9c5c8e00001a05c4', rssi: -35, snr: 5 }],
      dataRate: 'SF7BW125',
      spreadingFactor: 7,
      bandwidth: 125000,
      frequency: 868300000,
      codingRate: '4/6',
      decoded: { temperature: 1, luminosity: 0.64 },
      location: {
        latitude: 37.97155556731436,
        longitude: 23.72678801175413,
        altitude: 10,
        source: 'SOURCE_REGISTRY',
      },
    });
    expect(events).toEqual([
      {
        type: 'gateway',
        connectorId: 'c1',
        gatewayEui: '9c5c8e00001a05c4',
        online: true,
        at: new Date('2020-02-12T15:15:45.789Z'),
      },
    ]);
  });

  it('reads the zero values a complete uplink leaves out: frame counter 0, unconfirmed, SNR 0', () => {
    const { items } = read({
      end_device_ids: { device_id: 'meter-1', dev_eui: '70B3D57ED0000001', dev_addr: '260B1234' },
      correlation_ids: ['as:up:01HX'],
      received_at: '2024-05-01T10:00:00.2Z',
      uplink_message: {
        f_port: 2,
        frm_payload: 'AQID',
        rx_metadata: [{ gateway_ids: { gateway_id: 'gw-roof', eui: 'B827EBFFFE000001' }, rssi: -97 }],
        settings: { data_rate: { lora: { bandwidth: 125000, spreading_factor: 9 } }, frequency: '868100000' },
        received_at: '2024-05-01T10:00:00.141Z',
      },
    });
    expect(items[0]!.meta).toMatchObject({
      fCnt: 0,
      confirmed: false,
      gateways: [{ gatewayId: 'gw-roof', gatewayEui: 'b827ebfffe000001', rssi: -97, snr: 0 }],
    });
    // A filtered uplink may have left them out by its filter: unknown, not zero.
    const filtered = read({ uplink_message: { f_port: 2, frm_payload: 'AQID' } }, 'uplink', {
      dev_eui: 'AA',
    });
    expect(filtered.items[0]!.meta).toEqual({ devEui: 'aa', fPort: 2 });
  });

  it('stores an empty uplink on an application port; a MAC-only frame only marks its gateways heard', () => {
    const up = (uplink: Record<string, unknown>) => ({
      end_device_ids: { dev_eui: '70B3D57ED0000001' },
      uplink_message: {
        rx_metadata: [{ gateway_ids: { gateway_id: 'gw-roof', eui: 'B827EBFFFE000001' }, rssi: -97, snr: 3 }],
        settings: { data_rate: { lora: { bandwidth: 125000, spreading_factor: 7 } } },
        received_at: '2024-05-01T10:00:00Z',
        ...uplink,
      },
    });
    // `frm_payload` is left out when empty.
    const empty = read(up({ f_port: 5, f_cnt: 8 }));
    expect(empty.items).toHaveLength(1);
    expect(empty.items[0]!.payload).toEqual(Buffer.alloc(0));
    expect(empty.items[0]!.meta).toMatchObject({ fPort: 5, fCnt: 8 });
    const macOnly = read(up({ f_cnt: 9 }));
    expect(macOnly.items).toEqual([]);
    expect(macOnly.events).toEqual([expect.objectContaining({ gatewayEui: 'b827ebfffe000001' })]);
  });

  it('names the forwarding gateway of a Packet Broker reception, and reads FSK and LR-FHSS data rates', () => {
    const body = (rx: unknown, dataRate: unknown) => ({
      end_device_ids: { dev_eui: 'AA' },
      uplink_message: {
        f_port: 1,
        f_cnt: 3,
        frm_payload: 'AQ==',
        rx_metadata: [rx],
        settings: { data_rate: dataRate, frequency: '868800000' },
        received_at: '2024-05-01T10:00:00Z',
      },
    });
    const lora = { lora: { bandwidth: 125000, spreading_factor: 10, coding_rate: '4/5' } };
    const broker = {
      gateway_ids: { gateway_id: 'packetbroker' },
      packet_broker: {
        message_id: '01HXBROKER',
        forwarder_net_id: '000013',
        forwarder_gateway_eui: 'AA555A0000000101',
        forwarder_gateway_id: 'neighbour-gw',
        home_network_net_id: '000013',
      },
      rssi: -110,
      channel_rssi: -110,
      snr: -3.5,
    };
    const viaBroker = read(body(broker, lora));
    expect(viaBroker.items[0]!.meta!.gateways).toEqual([
      { gatewayId: 'neighbour-gw', gatewayEui: 'aa555a0000000101', rssi: -110, snr: -3.5 },
    ]);
    expect(viaBroker.events).toEqual([expect.objectContaining({ gatewayEui: 'aa555a0000000101' })]);

    const gateway = { gateway_ids: { gateway_id: 'gw-roof' }, rssi: -90 };
    expect(read(body(gateway, { fsk: { bit_rate: 50000 } })).items[0]!.meta).toMatchObject({
      dataRate: 'FSK50000',
      frequency: 868800000,
      gateways: [{ gatewayId: 'gw-roof', rssi: -90 }],
    });
    const lrFhss = { lrfhss: { operating_channel_width: 137000, coding_rate: '1/3' } };
    expect(read(body(gateway, lrFhss)).items[0]!.meta).toMatchObject({
      dataRate: 'LR-FHSS OCW137',
      bandwidth: 137000,
      codingRate: '1/3',
    });
  });

  it('reads a filtered uplink at its message path, the device named in the query', () => {
    const body = fixture('tts-docs-filtered-uplink');
    const { items } = read(body, 'uplink', { dev_eui: '0004A30B001C0530' });
    expect(items[0]!.deviceKey).toBe('0004a30b001c0530');
    expect(items[0]!.meta).toMatchObject({ fPort: 1, frequency: 868000000, spreadingFactor: 7 });
    expect(items[0]!.meta!.gateways).toEqual([{ gatewayId: 'test', rssi: 42, snr: 4.2 }]);
    // The filter left out the device: without it in the query the message is refused clearly.
    expect(() => read(body, 'uplink')).toThrow(/end_device_ids.dev_eui is missing/);
    // A filter that drops the message key: the path still says it is an uplink.
    const bare = body.uplink_message as Record<string, unknown>;
    expect(read(bare, 'uplink', { dev_eui: 'AA' }).items[0]!.meta!.fPort).toBe(1);
  });

  it('takes the device from a webhook path variable, as a path segment or in the query', () => {
    const body = fixture('tts-docs-filtered-uplink');
    expect(read(body, 'uplink/0004A30B001C0530').items[0]!.deviceKey).toBe('0004a30b001c0530');
    expect(read(body, 'uplink', { devEUI: '0004A30B001C0530' }).items[0]!.deviceKey).toBe('0004a30b001c0530');
    expect(() => read(body, 'nowhere/0004A30B001C0530')).toThrow(/not found/i);
    expect(() => read(body, 'uplink/%E0%A4%A')).toThrow(/not found/i);
  });

  it('turns a join accept into a packet without payload', () => {
    const { items, events } = read(fixture('tts-docs-join-accept'), 'join');
    expect(events).toEqual([]);
    expect(items).toEqual([
      {
        deviceKey: '0004a30b001c0530',
        payload: Buffer.alloc(0),
        meta: {
          event: 'join',
          devEui: '0004a30b001c0530',
          devAddr: '01497ecc',
          receivedAt: '2020-02-17T07:49:09.736532315Z',
        },
      },
    ]);
  });

  it('turns downlink acks, nacks and failures with a Stellwerk correlation id into downlink events', () => {
    const ack = fixture('tts-docs-downlink-ack');
    // Without Stellwerk's correlation id the downlink is not ours: nothing happens.
    expect(read(ack)).toEqual({ items: [], events: [], logs: [] });
    const ours = {
      ...ack,
      downlink_ack: { ...(ack.downlink_ack as object), correlation_ids: [`stellwerk:downlink:${DOWNLINK}`] },
    };
    expect(read(ours, 'downlink/ack')).toEqual({
      items: [],
      events: [
        {
          type: 'downlink',
          connectorId: 'c1',
          deviceKey: '0004a30b001c0530',
          status: 'acknowledged',
          downlinkId: DOWNLINK,
          fCnt: 1,
          at: new Date('2020-02-17T10:32:24.590413417Z'),
        },
      ],
      logs: [],
    });
    const ids = { end_device_ids: { dev_eui: 'AA' } };
    const corr = { correlation_ids: [`stellwerk:downlink:${DOWNLINK}`] };
    expect(read({ ...ids, downlink_nack: corr }).events[0]).toMatchObject({
      status: 'failed',
      reason: /acknowledged/,
    });
    expect(read({ ...ids, downlink_sent: corr }).events[0]).toMatchObject({ status: 'sent' });
    expect(read({ ...ids, downlink_queued: corr }).events[0]).toMatchObject({ status: 'queued' });
    const failed = { downlink: corr, error: { name: 'too_large', message_format: 'payload too large' } };
    expect(read({ ...ids, downlink_failed: failed }).events[0]).toMatchObject({
      status: 'failed',
      reason: 'payload too large',
    });
  });

  it('reads locations and battery service data as packets without payload', () => {
    const ids = { end_device_ids: { dev_eui: 'AA' } };
    const location = {
      location: { latitude: 52.1, longitude: 4.3, altitude: 3 },
      service: 'lora-cloud-geolocation',
    };
    expect(read({ ...ids, location_solved: location }).items[0]!.meta).toEqual({
      event: 'location',
      devEui: 'aa',
      location: { latitude: 52.1, longitude: 4.3, altitude: 3, source: 'lora-cloud-geolocation' },
    });
    expect(read({ ...ids, service_data: { service: 'x', data: { battery: 87 } } }).items[0]!.meta).toEqual({
      event: 'status',
      devEui: 'aa',
      battery: 87,
    });
  });

  it('addresses by end-device id when configured; refuses broken bodies and unknown paths', () => {
    const uplink = {
      end_device_ids: { device_id: 'Meter-7', dev_eui: 'AA' },
      uplink_message: { frm_payload: 'AQ==' },
    };
    expect(read(uplink, '', {}, { deviceIdFrom: 'device_id' }).items[0]!.deviceKey).toBe('meter-7');
    expect(() => read({ ...uplink, uplink_message: { frm_payload: 'not base64!' } })).toThrow(/base64/);
    expect(() => read([uplink])).toThrow(/one JSON object/);
    expect(() => read(uplink, 'nonsense')).toThrow(/Webhook/);
    expect(read({ end_device_ids: { dev_eui: 'AA' }, uplink_normalized: {} }).items).toEqual([]);
  });

  it('validates its settings; the API key is a secret', () => {
    const validate = settingsValidator(ttsUplinkKind);
    expect(validate({ deviceIdFrom: 'dev_eui', skipFrameCounterCheck: true, apiKey: 'NNSXS.x' })).toEqual([]);
    expect(validate({ deviceIdFrom: 'eui' })).toEqual([
      {
        path: '/config/deviceIdFrom',
        keyword: 'enum',
        params: { allowedValues: ['dev_eui', 'device_id'] },
        message: 'must be one of "dev_eui", "device_id"',
      },
    ]);
    expect(validate({ apiUrl: 'ftp://eu1.cloud.thethings.network' })).toEqual([
      {
        path: '/config/apiUrl',
        keyword: 'format',
        params: { format: 'http-url' },
        message: 'must be an http:// or https:// URL',
      },
    ]);
    // Ajv's own keyword and params for what the settings schema finds.
    expect(validate({ skipFrameCounterCheck: 'yes' })).toEqual([
      {
        path: '/config/skipFrameCounterCheck',
        keyword: 'type',
        params: { type: 'boolean' },
        message: 'must be boolean',
      },
    ]);
    expect(validate({ apiUrl: 'https://eu1.cloud.thethings.network' })).toEqual([]);
    expect((ttsUplinkKind.settings.properties.apiKey as { writeOnly?: boolean }).writeOnly).toBe(true);
  });
});
