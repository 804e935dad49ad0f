/**
 * What a front door knows about a packet besides its bytes: the network server's metadata for
 * LoRaWAN kinds, the topic for MQTT kinds. It travels with the packet through the spool and the
 * packet table, reaches the driver (TS013 `fPort`, `recvTime`) and becomes device states under the
 * reserved `_meta.` prefix, so health and event rules can use it (e.g. `_meta.rssi` < -120 dBm).
 *
 * Every field is optional: kinds fill what their network server reports. EUIs are lower-case hex.
 */

/** What kind of network-server message a packet stands for; absent means `uplink`. */
export type PacketEvent = 'uplink' | 'join' | 'status' | 'location';

export interface GeoLocation {
  latitude: number;
  longitude: number;
  altitude?: number;
  /** Where the fix came from (`gps`, `tdoa`, `registry`, …) as the network server names it. */
  source?: string;
}

/** One gateway that heard the uplink. */
export interface GatewayReception {
  /** The network server's gateway id (TTS `gateway_id`); absent when only the EUI is known. */
  gatewayId?: string;
  /** The gateway EUI, lower-case hex. */
  gatewayEui?: string;
  rssi?: number;
  snr?: number;
  location?: GeoLocation;
}

export interface PacketMeta {
  event?: PacketEvent;
  /** Embedded broker in cluster mode: the MQTT packet id, to recognise a resend (ADR 0130); no state. */
  mqttPacketId?: number;
  /** MQTT kinds: the topic the packet was published on. */
  topic?: string;
  fPort?: number;
  fCnt?: number;
  /** Lower-case hex. */
  devEui?: string;
  devAddr?: string;
  /** Confirmed uplink (the device asked for an acknowledgement). */
  confirmed?: boolean;
  /** The network server's receive time, ISO 8601 (the packet's `receivedAt` is Stellwerk's). */
  receivedAt?: string;
  gateways?: GatewayReception[];
  /** As the network server reports it, e.g. `SF7BW125` or a LoRaWAN data rate index. */
  dataRate?: string | number;
  spreadingFactor?: number;
  /** Hz. */
  bandwidth?: number;
  /** Hz. */
  frequency?: number;
  codingRate?: string;
  /** The network server's own decoded payload (TTS `decoded_payload`, ChirpStack `object`). */
  decoded?: unknown;
  /** Device status (ChirpStack `status`, TTS service data): battery level in percent, link margin in dB. */
  battery?: number;
  margin?: number;
  /** A location the network server solved or reported for the device. */
  location?: GeoLocation;
  /**
   * What a field protocol knows about the value besides itself (IEC 104 information object address,
   * cause of transmission and quality; OPC UA node id and status; LwM2M object path; Modbus register),
   * flat, one `_meta.<key>` state each. Keys are the kind's; they must not reuse the names above.
   */
  fields?: Readonly<Record<string, string | number | boolean>>;
}

/** The reserved prefix of metadata states. */
export const META_STATE_PREFIX = '_meta.';

/** The gateway that heard the packet best: highest RSSI, then highest SNR; the first when none is known. */
export function bestGateway(gateways: readonly GatewayReception[] | undefined): GatewayReception | undefined {
  if (!gateways || gateways.length === 0) return undefined;
  let best = gateways[0]!;
  for (const g of gateways) {
    const rssi = g.rssi ?? -Infinity;
    const bestRssi = best.rssi ?? -Infinity;
    if (rssi > bestRssi || (rssi === bestRssi && (g.snr ?? -Infinity) > (best.snr ?? -Infinity))) best = g;
  }
  return best;
}

/**
 * The metadata as device states (`_meta.fPort`, `_meta.rssi`, …). RSSI, SNR and `_meta.gateway` are
 * those of the best gateway; `_meta.gateways` keeps every reception.
 */
export function metaStates(meta: PacketMeta | undefined): Record<string, unknown> {
  if (!meta) return {};
  const states: Record<string, unknown> = {};
  const put = (key: string, value: unknown) => {
    if (value !== undefined) states[META_STATE_PREFIX + key] = value;
  };
  // A network-server message always names its event, so `_meta.event` never stays `join` after uplinks.
  const fromNetworkServer = meta.event !== undefined || meta.fPort !== undefined || meta.devEui !== undefined;
  put('event', fromNetworkServer ? (meta.event ?? 'uplink') : undefined);
  put('topic', meta.topic);
  put('fPort', meta.fPort);
  put('fCnt', meta.fCnt);
  put('devEui', meta.devEui);
  put('devAddr', meta.devAddr);
  put('confirmed', meta.confirmed);
  put('receivedAt', meta.receivedAt);
  const best = bestGateway(meta.gateways);
  if (best) {
    put('rssi', best.rssi);
    put('snr', best.snr);
    put('gateway', best.gatewayEui ?? best.gatewayId);
    put('gatewayCount', meta.gateways!.length);
    put('gateways', meta.gateways);
  }
  put('dataRate', meta.dataRate);
  put('spreadingFactor', meta.spreadingFactor);
  put('bandwidth', meta.bandwidth);
  put('frequency', meta.frequency);
  put('codingRate', meta.codingRate);
  put('battery', meta.battery);
  put('margin', meta.margin);
  put('location', meta.location);
  for (const [key, value] of Object.entries(meta.fields ?? {}))
    if (!(META_STATE_PREFIX + key in states)) put(key, value);
  return states;
}
