import type { TSchema } from 'typebox';
import type { GatewayReception, GeoLocation, PacketMeta } from '../../ingest/packet-meta.js';
import { errors } from '../../platform/errors.js';
import { problem } from '../../platform/http/problem-detail.js';
import type { ConfigProblem, DeviceIdentityRules, NetworkMessage, WebhookItem } from '../connector-kind.js';
import type { GatewayStatusEvent } from '../network-events.js';
import { flag } from './settings-fields.js';

/**
 * What the LoRaWAN network-server kinds (tts-uplink, chirpstack-uplink, chirpstack-mqtt,
 * loriot-uplink) share: device identity, common settings and readers for the loosely typed JSON
 * network servers send. Every field a network server may omit is read defensively: documented
 * examples leave out zero values, and a missing field must never cost the uplink.
 */

/** Devices are addressed by their EUI, matched and stored lower-case; no other field is required. */
export const LORAWAN_DEVICES: DeviceIdentityRules = { required: [], lowerCaseEui: true, endDeviceId: false };

/** Settings every LoRaWAN kind has. */
export const lorawanFields = (): Record<string, TSchema> => ({
  skipFrameCounterCheck: flag('Do not flag frame-counter resets and repeats (devices that restart at 0)'),
});

/** The network server's API base (`apiUrl`), when set, is an http(s) URL with a host. */
export function checkApiUrl(config: Record<string, unknown>): ConfigProblem[] {
  const value = config.apiUrl;
  if (value === undefined || value === '') return [];
  const url = typeof value === 'string' && URL.canParse(value) ? new URL(value) : undefined;
  const ok =
    url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  return ok
    ? []
    : [problem('/config/apiUrl', 'format', { format: 'http-url' }, 'must be an http:// or https:// URL')];
}

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

export const objectAt = (value: unknown, ...path: string[]): Json | undefined => {
  let at: unknown = value;
  for (const key of path) at = isObject(at) ? at[key] : undefined;
  return isObject(at) ? at : undefined;
};

export const stringAt = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/** A finite number, also from a numeric string (TTS sends 64-bit values such as `frequency` as strings). */
export const numberAt = (value: unknown): number | undefined => {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
};

/** An EUI as stored: lower-case hex without separators; undefined when it is not hex. */
export function euiOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const hex = value.replace(/[-:\s]/g, '').toLowerCase();
  return /^[0-9a-f]{1,32}$/.test(hex) ? hex : undefined;
}

/** The device key of a LoRaWAN message: the EUI (or id) lower-cased; 422 when there is none. */
export function deviceKeyOf(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 200) {
    throw errors.unprocessable('DEVICE_ID_MISSING', `${field} is missing`);
  }
  // LoRaWAN identifiers are case-insensitive; devices store the EUI lower-cased (spec).
  return value.trim().toLowerCase();
}

export function locationOf(value: unknown, source?: string): GeoLocation | undefined {
  if (!isObject(value)) return undefined;
  const latitude = numberAt(value.latitude ?? value.lat);
  const longitude = numberAt(value.longitude ?? value.lon ?? value.lng);
  if (latitude === undefined || longitude === undefined) return undefined;
  const altitude = numberAt(value.altitude ?? value.alt);
  const from = stringAt(value.source) ?? source;
  return {
    latitude,
    longitude,
    ...(altitude !== undefined ? { altitude } : {}),
    ...(from ? { source: from } : {}),
  };
}

/** The meta without undefined fields, so stored packets and tests see only what was reported. */
export function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Bytes of a base64 field; 422 when it is not base64. */
export function base64Payload(value: unknown, field: string): Buffer {
  if (value === undefined || value === null || value === '') return Buffer.alloc(0);
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value)) {
    throw errors.unprocessable('INVALID_PAYLOAD', `${field} must be base64`);
  }
  return Buffer.from(value, 'base64');
}

/** Bytes of a hex field; 422 when it is not hex. */
export function hexPayload(value: unknown, field: string): Buffer {
  if (value === undefined || value === null || value === '') return Buffer.alloc(0);
  if (typeof value !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(value)) {
    throw errors.unprocessable('INVALID_PAYLOAD', `${field} must be hex`);
  }
  return Buffer.from(value, 'hex');
}

/** `SF7 BW125 4/5` / `SF7BW125` → spreading factor and bandwidth (Hz). */
export function loraDataRate(value: unknown): {
  spreadingFactor?: number;
  bandwidth?: number;
  codingRate?: string;
} {
  if (typeof value !== 'string') return {};
  const sf = /SF(\d+)/i.exec(value);
  const bw = /BW(\d+)/i.exec(value);
  const cr = /(\d\/\d)/.exec(value);
  return compact({
    spreadingFactor: sf ? Number(sf[1]) : undefined,
    bandwidth: bw ? Number(bw[1]) * 1000 : undefined,
    codingRate: cr ? cr[1] : undefined,
  });
}

/** Gateway status events for the gateways that heard a message: they are online now. */
export function gatewaysHeard(
  connectorId: string,
  gateways: readonly GatewayReception[] | undefined,
  at: Date,
): GatewayStatusEvent[] {
  const seen = new Set<string>();
  const events: GatewayStatusEvent[] = [];
  for (const g of gateways ?? []) {
    if (!g.gatewayEui || seen.has(g.gatewayEui)) continue;
    seen.add(g.gatewayEui);
    events.push(
      compact({
        type: 'gateway',
        connectorId,
        gatewayEui: g.gatewayEui,
        online: true,
        location: g.location,
        at,
      }),
    );
  }
  return events;
}

/**
 * Whether an uplink is a packet for the driver: it has bytes, the network server decoded something, or
 * it names an application port (an empty frame on port 1–223 is the device's message too; network
 * servers omit an empty payload). MAC-only frames (no port, port 0) carry nothing for the driver.
 */
export const isApplicationUplink = (payload: Buffer, meta: PacketMeta): boolean =>
  payload.length > 0 || meta.decoded !== undefined || (meta.fPort ?? 0) > 0;

/**
 * Proto3 JSON (The Things Stack, ChirpStack) leaves out fields at their zero value: in a message that
 * is known to be complete, a missing number is 0 and a missing flag false.
 */
export const numberOrZero = (value: unknown): number | undefined =>
  value === undefined ? 0 : numberAt(value);

export const packet = (deviceKey: string, payload: Buffer, meta: PacketMeta): WebhookItem => ({
  deviceKey,
  payload,
  meta: compact(meta),
});

export const nothing = (): NetworkMessage => ({ items: [], events: [], logs: [] });

/** A valid ISO date from a network server's time, or now. */
export function timeOf(value: unknown): Date {
  const date = typeof value === 'string' || typeof value === 'number' ? new Date(value) : undefined;
  return date && Number.isFinite(date.getTime()) ? date : new Date();
}
