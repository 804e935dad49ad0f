import type { GatewayReception, PacketMeta } from '../../ingest/packet-meta.js';
import { errors } from '../../platform/errors.js';
import type { NetworkLogEntry, NetworkMessage } from '../connector-kind.js';
import type { DownlinkEvent } from '../network-events.js';
import {
  base64Payload,
  compact,
  deviceKeyOf,
  euiOf,
  gatewaysHeard,
  isApplicationUplink,
  isObject,
  locationOf,
  nothing,
  numberAt,
  numberOrZero,
  objectAt,
  packet,
  stringAt,
  timeOf,
  type Json,
} from './lorawan.js';

/**
 * ChirpStack v4 integration events, as its HTTP integration (`?event=up`) and its MQTT integration
 * (`application/{id}/device/{devEui}/event/{event}`) send them with the JSON marshaler (camelCase).
 * Shared by chirpstack-uplink and chirpstack-mqtt.
 *
 * That JSON is proto3 JSON (pbjson): fields at their zero value are left out. ChirpStack sends events
 * whole, so in them a missing number is 0 and a missing flag false (`fCnt`, `dr`, `confirmed`, a
 * gateway's `snr`, a status's `margin`).
 *
 * - `up`: `data` (base64) becomes the packet's bytes, the rest its metadata; `object` (ChirpStack's
 *   own codec) is kept as `meta.decoded`.
 * - `join`, `status`, `location`: packets without payload (`meta.event`).
 * - `ack`, `txack`: downlink events by ChirpStack's queue item id.
 * - `log`: a connector log entry.
 * - Other events (`integration`, unknown ones) are accepted and ignored.
 */
export const CHIRPSTACK_EVENTS = ['up', 'join', 'status', 'ack', 'txack', 'log', 'location'] as const;

const LOG_LEVELS: Record<string, NetworkLogEntry['level']> = {
  INFO: 'info',
  WARNING: 'warn',
  ERROR: 'error',
};

/**
 * `common.CodeRate` → `4/5`: `CR_4_5` → `4/5`, LR-FHSS `CR_1_3` → `1/3`, LoRa 2.4 GHz `CR_LI_4_8` →
 * `4/8LI`; `CR_UNDEFINED` is none. ChirpStack 4.0 sent the rate as a string (`4/5`), later
 * `codeRateLegacy`.
 */
function codeRate(modulation: Json | undefined): string | undefined {
  const value = stringAt(modulation?.codeRate) ?? stringAt(modulation?.codeRateLegacy);
  if (value === undefined || value === 'CR_UNDEFINED') return undefined;
  const enumName = /^CR_(LI_)?(\d)_(\d)$/.exec(value);
  return enumName ? `${enumName[2]}/${enumName[3]}${enumName[1] ? 'LI' : ''}` : value;
}

export function chirpstackEvent(event: string, body: unknown, connectorId: string): NetworkMessage {
  if (!isObject(body)) throw errors.unprocessable('INVALID_PAYLOAD', 'A ChirpStack event is one JSON object');
  if (!(CHIRPSTACK_EVENTS as readonly string[]).includes(event)) return nothing();
  const devEuiRaw = objectAt(body, 'deviceInfo')?.devEui;
  const deviceKey = deviceKeyOf(devEuiRaw, 'deviceInfo.devEui');
  const base: PacketMeta = { devEui: euiOf(devEuiRaw) };
  const time = stringAt(body.time);
  const at = timeOf(body.time);
  const one = (meta: PacketMeta): NetworkMessage => ({
    items: [packet(deviceKey, Buffer.alloc(0), { ...base, receivedAt: time, ...meta })],
    events: [],
    logs: [],
  });
  switch (event) {
    case 'up':
      return uplink(deviceKey, body, base, connectorId);
    case 'join':
      return one({ event: 'join', devAddr: stringAt(body.devAddr)?.toLowerCase() });
    case 'status':
      // `batteryLevelUnavailable` / external power: no battery figure to report.
      return one({
        event: 'status',
        battery: body.batteryLevelUnavailable === true ? undefined : numberAt(body.batteryLevel),
        margin: numberOrZero(body.margin),
      });
    case 'location': {
      const location = locationOf(body.location);
      return location ? one({ event: 'location', location }) : nothing();
    }
    case 'ack':
    case 'txack':
      return downlink(event, deviceKey, body, connectorId, at);
    default:
      return log(deviceKey, body);
  }
}

function uplink(deviceKey: string, body: Json, base: PacketMeta, connectorId: string): NetworkMessage {
  const tx = objectAt(body, 'txInfo') ?? {};
  const lora = objectAt(tx, 'modulation', 'lora');
  const lrFhss = objectAt(tx, 'modulation', 'lrFhss');
  const gateways = (Array.isArray(body.rxInfo) ? body.rxInfo : [])
    .filter(isObject)
    .map((rx): GatewayReception =>
      compact({
        gatewayEui: euiOf(rx.gatewayId),
        rssi: numberAt(rx.rssi),
        // A LoRa reception always has an SNR: missing is 0 dB.
        snr: lora ? numberOrZero(rx.snr) : numberAt(rx.snr),
        location: locationOf(rx.location),
      }),
    );
  const meta: PacketMeta = {
    ...base,
    fPort: numberAt(body.fPort),
    fCnt: numberOrZero(body.fCnt),
    devAddr: stringAt(body.devAddr)?.toLowerCase(),
    confirmed:
      body.confirmed === undefined ? false : typeof body.confirmed === 'boolean' ? body.confirmed : undefined,
    receivedAt: stringAt(body.time),
    gateways: gateways.length ? gateways : undefined,
    dataRate: numberOrZero(body.dr),
    spreadingFactor: numberAt(lora?.spreadingFactor),
    bandwidth: numberAt(lora?.bandwidth) ?? numberAt(lrFhss?.operatingChannelWidth),
    frequency: numberAt(tx.frequency),
    codingRate: codeRate(lora ?? lrFhss),
    decoded: body.object,
  };
  const events = gatewaysHeard(connectorId, gateways, timeOf(body.time));
  const payload = base64Payload(body.data, 'data');
  if (!isApplicationUplink(payload, meta)) return { items: [], events, logs: [] };
  return { items: [packet(deviceKey, payload, meta)], events, logs: [] };
}

function downlink(
  event: 'ack' | 'txack',
  deviceKey: string,
  body: Json,
  connectorId: string,
  at: Date,
): NetworkMessage {
  const remoteId = stringAt(body.queueItemId);
  if (!remoteId) return nothing();
  const acknowledged = body.acknowledged === true;
  const status = event === 'txack' ? 'sent' : acknowledged ? 'acknowledged' : 'failed';
  const result: DownlinkEvent = compact({
    type: 'downlink',
    connectorId,
    deviceKey,
    status,
    remoteId,
    fCnt: numberAt(body.fCntDown),
    reason: status === 'failed' ? 'not acknowledged by the device' : undefined,
    at,
  });
  const gatewayEui = event === 'txack' ? euiOf(body.gatewayId) : undefined;
  return {
    items: [],
    events: [
      result,
      ...(gatewayEui ? [{ type: 'gateway' as const, connectorId, gatewayEui, online: true, at }] : []),
    ],
    logs: [],
  };
}

function log(deviceKey: string, body: Json): NetworkMessage {
  const level = LOG_LEVELS[String(body.level).toUpperCase()] ?? 'info';
  const description = stringAt(body.description) ?? stringAt(body.code) ?? 'log event';
  return {
    items: [],
    events: [],
    logs: [
      {
        level,
        message: `ChirpStack: ${description.slice(0, 500)}`,
        details: compact({
          code: stringAt(body.code),
          deviceId: deviceKey,
          context: isObject(body.context) ? body.context : undefined,
        }),
      },
    ],
  };
}
