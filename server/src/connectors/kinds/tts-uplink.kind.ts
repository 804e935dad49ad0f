import type { GatewayReception, PacketMeta } from '../../ingest/packet-meta.js';
import { errors } from '../../platform/errors.js';
import type { Connector } from '../connector.entity.js';
import type { ConnectorKindDescriptor, NetworkMessage, WebhookRequest } from '../connector-kind.js';
import type { DownlinkEvent, DownlinkStatus } from '../network-events.js';
import {
  base64Payload,
  checkApiUrl,
  compact,
  deviceKeyOf,
  euiOf,
  gatewaysHeard,
  isApplicationUplink,
  isObject,
  locationOf,
  lorawanFields,
  nothing,
  numberAt,
  numberOrZero,
  objectAt,
  packet,
  stringAt,
  timeOf,
  type Json,
} from './lorawan.js';
import {
  downlinkIdFromCorrelationIds,
  ttsDeviceDeleter,
  ttsDownlinkSender,
} from '../../downlinks/delivery/tts.js';
import { oneOf, secret, settingsObject, text } from './settings-fields.js';

/**
 * The Things Stack v3 application webhook (JSON format). One URL takes every message type: the
 * type is the message's top-level key (`uplink_message`, `join_accept`, …), or, for webhooks with
 * a path per message type, the path after the token (`/uplink`, `/join`, `/downlink/ack`, …) —
 * which is what a filtered webhook needs when its filter drops the key.
 *
 * - uplink: `frm_payload` becomes the packet's bytes, the rest its metadata (fPort, frame counter,
 *   gateways, data rate, `decoded_payload`, …); the driver decodes it.
 * - join accept, location solved, service data: packets without payload (`meta.event`).
 * - downlink queued/sent/ack/nack/failed: downlink events; Stellwerk's downlink id comes back in the
 *   correlation ids as `stellwerk:downlink:<id>`.
 * Devices are addressed by the lower-cased DevEUI (`deviceIdFrom: "dev_eui"`, default) or by the
 * end-device id (`"device_id"`). Message types Stellwerk does not use are accepted and ignored,
 * so The Things Stack neither retries nor disables the webhook.
 */
export const ttsUplinkKind: ConnectorKindDescriptor = {
  type: 'tts-uplink',
  direction: 'incoming',
  summary:
    'The Things Stack v3 application webhook: uplinks with metadata, joins, locations, downlink events.',
  capabilities: ['webhook', 'receives', 'downlink', 'remote-delete'],
  settings: settingsObject({
    deviceIdFrom: oneOf(['dev_eui', 'device_id'], 'What addresses the device (default dev_eui)'),
    apiUrl: text(500, 'The Things Stack cluster, e.g. https://eu1.cloud.thethings.network'),
    apiKey: secret(500, 'API key with rights to the application (downlinks, device deletion)'),
    applicationId: text(100, 'The TTS application this webhook belongs to'),
    webhookId: text(100, 'The webhook id in the TTS application'),
    ...lorawanFields(),
  }),
  check: checkApiUrl,
  devices: { required: [], lowerCaseEui: true, endDeviceId: true },
  runtime: ({ outgoing }) => ({
    webhookMessage: ttsMessage,
    downlink: ttsDownlinkSender(outgoing),
    remoteDelete: ttsDeviceDeleter(outgoing),
  }),
};

/** Message path (as configured per message type in The Things Stack) → the message's key. */
const PATHS: Record<string, string> = {
  uplink: 'uplink_message',
  up: 'uplink_message',
  'uplink-message': 'uplink_message',
  join: 'join_accept',
  'join-accept': 'join_accept',
  location: 'location_solved',
  'location-solved': 'location_solved',
  'service/data': 'service_data',
  'service-data': 'service_data',
  'downlink/queued': 'downlink_queued',
  'downlink/sent': 'downlink_sent',
  'downlink/ack': 'downlink_ack',
  'downlink/nack': 'downlink_nack',
  'downlink/failed': 'downlink_failed',
  'downlink-queued': 'downlink_queued',
  'downlink-sent': 'downlink_sent',
  'downlink-ack': 'downlink_ack',
  'downlink-nack': 'downlink_nack',
  'downlink-failed': 'downlink_failed',
};

const MESSAGE_KEYS = [
  'uplink_message',
  'join_accept',
  'location_solved',
  'service_data',
  'downlink_queued',
  'downlink_sent',
  'downlink_ack',
  'downlink_nack',
  'downlink_failed',
] as const;

const DOWNLINK_STATUS: Record<string, DownlinkStatus> = {
  downlink_queued: 'queued',
  downlink_sent: 'sent',
  downlink_ack: 'acknowledged',
  downlink_nack: 'failed',
  downlink_failed: 'failed',
};

export function ttsMessage(body: unknown, connector: Connector, request: WebhookRequest): NetworkMessage {
  if (!isObject(body)) {
    throw errors.unprocessable('INVALID_PAYLOAD', 'A The Things Stack message is one JSON object');
  }
  const { messagePath, pathDevice } = splitPath(request.path);
  const byPath = PATHS[messagePath];
  if (request.path !== '' && !byPath) throw errors.notFound('Webhook');
  // The device named by a webhook path variable (`/uplink/{devEUI}` or `/uplink{?devEUI}`), for
  // filtered webhooks whose field mask leaves out `end_device_ids`.
  const named = {
    eui: request.query.dev_eui ?? request.query.devEUI ?? pathDevice,
    id: request.query.device_id ?? request.query.devID ?? pathDevice,
  };
  const key = MESSAGE_KEYS.find((k) => isObject(body[k])) ?? byPath;
  // A filtered webhook may send the message's fields without its key: the path says what it is.
  const message = key ? (objectAt(body, key) ?? (byPath === key ? body : undefined)) : undefined;
  if (!key || !message) return nothing();
  const deviceKey = deviceKeyFrom(body, connector, named);
  const ids = objectAt(body, 'end_device_ids') ?? {};
  const base: PacketMeta = {
    devEui: euiOf(ids.dev_eui ?? named.eui),
    devAddr: stringAt(ids.dev_addr)?.toLowerCase(),
  };
  const at = timeOf(body.received_at);
  switch (key) {
    case 'uplink_message':
      return uplink(connector, deviceKey, message, base, body);
    case 'join_accept':
      return one(deviceKey, {
        ...base,
        event: 'join',
        receivedAt: stringAt(message.received_at) ?? stringAt(body.received_at),
      });
    case 'location_solved': {
      const location = locationOf(message.location, stringAt(message.service));
      if (!location) return nothing();
      return one(deviceKey, { ...base, event: 'location', location, receivedAt: stringAt(body.received_at) });
    }
    case 'service_data':
      return serviceData(deviceKey, message, base, body);
    default:
      return downlink(connector, deviceKey, key, message, body, at);
  }
}

/** `end_device_ids` by the setting; a filtered webhook without them may name the device in its URL. */
function deviceKeyFrom(body: Json, connector: Connector, named: { eui?: string; id?: string }): string {
  const ids = objectAt(body, 'end_device_ids') ?? {};
  const byDeviceId = connector.config.deviceIdFrom === 'device_id';
  const raw = byDeviceId
    ? (ids.device_id ?? named.id)
    : (ids.dev_eui ?? named.eui ?? ids.device_id ?? named.id);
  return deviceKeyOf(raw, `end_device_ids.${byDeviceId ? 'device_id' : 'dev_eui'}`);
}

/** A message path, or a message path followed by one segment naming the device (`uplink/0004a30b001c0530`). */
function splitPath(path: string): { messagePath: string; pathDevice?: string } {
  const lower = path.toLowerCase();
  if (lower === '' || PATHS[lower]) return { messagePath: lower };
  const slash = path.lastIndexOf('/');
  if (slash <= 0) return { messagePath: lower };
  let segment: string;
  try {
    segment = decodeURIComponent(path.slice(slash + 1));
  } catch {
    return { messagePath: lower };
  }
  return { messagePath: lower.slice(0, slash), pathDevice: segment === '' ? undefined : segment };
}

const one = (deviceKey: string, meta: PacketMeta): NetworkMessage => ({
  items: [packet(deviceKey, Buffer.alloc(0), meta)],
  events: [],
  logs: [],
});

function uplink(
  connector: Connector,
  deviceKey: string,
  up: Json,
  base: PacketMeta,
  body: Json,
): NetworkMessage {
  const settings = objectAt(up, 'settings') ?? {};
  const lora = objectAt(settings, 'data_rate', 'lora');
  const fsk = objectAt(settings, 'data_rate', 'fsk');
  const lrfhss = objectAt(settings, 'data_rate', 'lrfhss');
  // The webhook's JSON leaves out zero values (f_cnt 0, confirmed false, snr 0), and a filtered webhook
  // leaves out what its filter drops. The Network Server always sets settings, rx_metadata and
  // received_at: with them the message is complete, and a missing value is zero.
  const complete = isObject(up.settings) && Array.isArray(up.rx_metadata) && up.received_at !== undefined;
  const gateways = (Array.isArray(up.rx_metadata) ? up.rx_metadata : [])
    .filter(isObject)
    .map((rx): GatewayReception => {
      // Received through Packet Broker (another network's gateway): TTS names the gateway
      // `packetbroker`; the forwarder's gateway EUI and id say which one it was.
      const ids = objectAt(rx, 'gateway_ids');
      const broker = objectAt(rx, 'packet_broker');
      return compact({
        gatewayId: stringAt(broker?.forwarder_gateway_id) ?? stringAt(ids?.gateway_id),
        gatewayEui: euiOf(broker?.forwarder_gateway_eui) ?? euiOf(ids?.eui),
        rssi: numberAt(rx.rssi) ?? numberAt(rx.channel_rssi),
        // A LoRa reception always has an SNR: missing is 0 dB.
        snr: lora ? numberOrZero(rx.snr) : numberAt(rx.snr),
        location: locationOf(rx.location),
      });
    });
  const locations = objectAt(up, 'locations');
  const firstLocation = locations ? Object.values(locations).find(isObject) : undefined;
  const bitRate = numberAt(fsk?.bit_rate);
  const channelWidth = numberAt(lrfhss?.operating_channel_width);
  const meta: PacketMeta = {
    ...base,
    fPort: numberAt(up.f_port),
    fCnt: complete ? numberOrZero(up.f_cnt) : numberAt(up.f_cnt),
    confirmed:
      typeof up.confirmed === 'boolean'
        ? up.confirmed
        : complete && up.confirmed === undefined
          ? false
          : undefined,
    receivedAt: stringAt(up.received_at) ?? stringAt(body.received_at),
    gateways: gateways.length ? gateways : undefined,
    dataRate:
      lora?.spreading_factor !== undefined && lora.bandwidth !== undefined
        ? `SF${numberAt(lora.spreading_factor)}BW${(numberAt(lora.bandwidth) ?? 0) / 1000}`
        : bitRate !== undefined
          ? `FSK${bitRate}`
          : channelWidth !== undefined
            ? `LR-FHSS OCW${channelWidth / 1000}`
            : numberAt(settings.data_rate_index),
    spreadingFactor: numberAt(lora?.spreading_factor),
    bandwidth: numberAt(lora?.bandwidth) ?? channelWidth,
    frequency: numberAt(settings.frequency),
    codingRate:
      stringAt(settings.coding_rate) ?? stringAt(lora?.coding_rate) ?? stringAt(lrfhss?.coding_rate),
    decoded: up.decoded_payload,
    location: locationOf(firstLocation),
  };
  const events = gatewaysHeard(connector.id, gateways, timeOf(meta.receivedAt));
  const payload = base64Payload(up.frm_payload, 'uplink_message.frm_payload');
  // Without application data (MAC-only frames: no port, or port 0) there is nothing for the driver:
  // the gateways still heard the device.
  if (!isApplicationUplink(payload, meta)) return { items: [], events, logs: [] };
  return { items: [packet(deviceKey, payload, meta)], events, logs: [] };
}

/** Service data from application packages: battery (percent) when the service reports one. */
function serviceData(deviceKey: string, message: Json, base: PacketMeta, body: Json): NetworkMessage {
  const data = objectAt(message, 'data') ?? {};
  const battery = numberAt(data.battery) ?? numberAt(objectAt(data, 'device')?.battery);
  if (battery === undefined) return nothing();
  return one(deviceKey, { ...base, event: 'status', battery, receivedAt: stringAt(body.received_at) });
}

function downlink(
  connector: Connector,
  deviceKey: string,
  key: string,
  message: Json,
  body: Json,
  at: Date,
): NetworkMessage {
  // downlink_failed carries the downlink under `downlink` and the reason under `error`.
  const item = objectAt(message, 'downlink') ?? message;
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
  const ids = [...list(item.correlation_ids), ...list(body.correlation_ids)];
  const downlinkId = downlinkIdFromCorrelationIds(ids);
  if (!downlinkId) return nothing();
  const status = DOWNLINK_STATUS[key]!;
  const error = objectAt(message, 'error');
  const reason =
    key === 'downlink_nack'
      ? 'not acknowledged by the device'
      : key === 'downlink_failed'
        ? (stringAt(error?.message_format) ?? stringAt(error?.name) ?? 'failed')
        : undefined;
  const event: DownlinkEvent = compact({
    type: 'downlink',
    connectorId: connector.id,
    deviceKey,
    status,
    downlinkId,
    fCnt: numberAt(item.f_cnt),
    reason,
    at,
  });
  return { items: [], events: [event], logs: [] };
}
