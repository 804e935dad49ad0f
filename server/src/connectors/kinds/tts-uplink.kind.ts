import { errors } from '../../platform/errors.js';
import type { Connector } from '../connector.entity.js';
import type { ConnectorKindDescriptor, WebhookItem } from '../connector-kind.js';
import { ttsDeviceDeleter, ttsDownlinkSender } from '../../downlinks/delivery/tts.js';
import { oneOf, secret, settingsObject, text } from './settings-fields.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

interface TtsUplink {
  end_device_ids?: { device_id?: unknown; dev_eui?: unknown };
  uplink_message?: { frm_payload?: unknown };
}

/**
 * The Things Stack (LoRaWAN network server) uplink webhook. The application's webhook posts
 * uplink messages to this connector's `apiEndpoint`; `uplink_message.frm_payload` (base64) becomes
 * the packet's bytes, decoded by the device's driver. The device is addressed by its lowercased
 * DevEUI (`deviceIdFrom: "dev_eui"`, default) or by the TTS end-device id (`"device_id"`).
 * Messages without a frm_payload (join accepts, status messages, empty uplinks) are accepted and
 * ignored, so TTS does not retry or disable the webhook.
 */
export const ttsUplinkKind: ConnectorKindDescriptor = {
  type: 'tts-uplink',
  direction: 'incoming',
  summary: 'The Things Stack v3 application webhook posts LoRaWAN uplinks to a secret URL.',
  capabilities: ['webhook', 'receives', 'downlink', 'remote-delete'],
  settings: settingsObject({
    deviceIdFrom: oneOf(['dev_eui', 'device_id'], 'What addresses the device (default dev_eui)'),
    applicationId: text(100, 'The TTS application this webhook belongs to'),
    apiUrl: text(
      500,
      'Base URL of the TTS API for downlinks and deletion, e.g. https://eu1.cloud.thethings.network',
    ),
    apiKey: secret(500, 'API key with traffic writing (and device deletion) rights'),
    webhookId: text(100, 'The webhook whose downlink API is used'),
  }),
  devices: { required: [], lowerCaseEui: true, endDeviceId: true },
  runtime: ({ outgoing }) => ({
    webhookItems: ttsUplinkItems,
    downlink: ttsDownlinkSender(outgoing),
    remoteDelete: ttsDeviceDeleter(outgoing),
  }),
};

export function ttsUplinkItems(body: unknown, connector: Connector): WebhookItem[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw errors.unprocessable('INVALID_PAYLOAD', 'A The Things Stack uplink is one JSON object');
  }
  const message = body as TtsUplink;
  const payload = message.uplink_message?.frm_payload;
  if (payload === undefined) return [];
  if (typeof payload !== 'string' || !BASE64.test(payload)) {
    throw errors.unprocessable('INVALID_PAYLOAD', 'uplink_message.frm_payload must be base64');
  }
  const ids = message.end_device_ids ?? {};
  const byDeviceId = connector.config.deviceIdFrom === 'device_id';
  const raw = byDeviceId ? ids.device_id : (ids.dev_eui ?? ids.device_id);
  if (typeof raw !== 'string' || raw.trim() === '' || raw.length > 200) {
    throw errors.unprocessable(
      'DEVICE_ID_MISSING',
      `end_device_ids.${byDeviceId ? 'device_id' : 'dev_eui'} is missing`,
    );
  }
  // LoRaWAN identifiers are case-insensitive; devices store the EUI lowercased (spec).
  return [{ deviceKey: raw.trim().toLowerCase(), payload: Buffer.from(payload, 'base64') }];
}
