import type { GatewayReception, PacketMeta } from '../../ingest/packet-meta.js';
import { errors } from '../../platform/errors.js';
import type { Connector } from '../connector.entity.js';
import type { ConnectorKindDescriptor, NetworkMessage } from '../connector-kind.js';
import {
  compact,
  deviceKeyOf,
  euiOf,
  gatewaysHeard,
  hexPayload,
  isApplicationUplink,
  isObject,
  LORAWAN_DEVICES,
  locationOf,
  loraDataRate,
  lorawanFields,
  nothing,
  numberAt,
  packet,
  stringAt,
  timeOf,
  type Json,
} from './lorawan.js';
import { oneOf, settingsObject } from './settings-fields.js';

/**
 * LORIOT network server, HTTP push application output (JSON). Two messages matter:
 * - `rx` (Uplink Data Message): `data` (hex) becomes the packet's bytes; fPort, frame counter, RSSI,
 *   SNR, frequency and data rate its metadata.
 * - `gw` (Gateway Information): the same frame again, later, with every gateway that heard it.
 * With gateway information enabled LORIOT sends both for each frame, so one of them is the uplink
 * (`uplinkFrom`, default `rx`: it arrives first); either reports the gateways it names online.
 * Other messages (`txd`, downlink confirmations, …) are accepted and ignored. Payloads LORIOT could
 * not decrypt (`encdata` only) are refused: no driver can read them.
 */
export const loriotUplinkKind: ConnectorKindDescriptor = {
  type: 'loriot-uplink',
  direction: 'incoming',
  summary: 'LORIOT HTTP push: rx uplinks with metadata; gw gateway information.',
  capabilities: ['webhook', 'receives'],
  settings: settingsObject({
    uplinkFrom: oneOf(['rx', 'gw'], 'Which message is the uplink when both are enabled (default rx)'),
    ...lorawanFields(),
  }),
  devices: LORAWAN_DEVICES,
  runtime: () => ({ webhookMessage: (body, connector) => loriotMessage(body, connector) }),
};

export function loriotMessage(body: unknown, connector: Connector): NetworkMessage {
  if (!isObject(body)) throw errors.unprocessable('INVALID_PAYLOAD', 'A LORIOT message is one JSON object');
  const cmd = body.cmd;
  if (cmd !== 'rx' && cmd !== 'gw') return nothing();
  const deviceKey = deviceKeyOf(body.EUI, 'EUI');
  const uplinkFrom = connector.config.uplinkFrom === 'gw' ? 'gw' : 'rx';
  const gateways = gatewaysOf(body);
  // `ts`: LORIOT's receive time in ms; without a valid one the network server's time is unknown.
  const reported = typeof body.ts === 'number' ? new Date(body.ts) : undefined;
  const receivedAt = reported && Number.isFinite(reported.getTime()) ? reported.toISOString() : undefined;
  const at = timeOf(receivedAt);
  // An rx message carries `gws` too when gateway information is enabled: every gateway named is heard.
  const events = gatewaysHeard(connector.id, gateways, at);
  if (cmd !== uplinkFrom) return { items: [], events, logs: [] };
  if (body.data === undefined && body.encdata !== undefined) {
    throw errors.unprocessable(
      'PAYLOAD_ENCRYPTED',
      'LORIOT sent the payload encrypted (no AppSKey assigned)',
    );
  }
  const payload = hexPayload(body.data, 'data');
  const radio = loraDataRate(body.dr);
  const meta: PacketMeta = {
    devEui: euiOf(body.EUI),
    fPort: numberAt(body.port),
    fCnt: numberAt(body.fcnt),
    confirmed: typeof body.ack === 'boolean' ? body.ack : undefined,
    receivedAt,
    gateways: gateways.length ? gateways : undefined,
    dataRate: stringAt(body.dr)?.replace(/\s+/g, ' '),
    ...radio,
    frequency: numberAt(body.freq),
    // `bat` is the DevStatusAns battery byte: 0 external power, 1–254 level, 255 unknown.
    battery:
      typeof body.bat === 'number' && body.bat >= 1 && body.bat <= 254
        ? Math.round((body.bat / 254) * 1000) / 10
        : undefined,
  };
  // A MAC-only frame (port 0, no data) has nothing for the driver: its gateways still heard the device.
  if (!isApplicationUplink(payload, meta)) return { items: [], events, logs: [] };
  return { items: [packet(deviceKey, payload, meta)], events, logs: [] };
}

/** `gws[]` of a gw message; an rx message's own rssi/snr stand for one unnamed gateway. */
function gatewaysOf(body: Json): GatewayReception[] {
  if (Array.isArray(body.gws)) {
    return body.gws.filter(isObject).map((g) =>
      compact({
        gatewayEui: euiOf(g.gweui),
        rssi: numberAt(g.rssi),
        snr: numberAt(g.snr),
        location: locationOf(g),
      }),
    );
  }
  const rssi = numberAt(body.rssi);
  const snr = numberAt(body.snr);
  return rssi === undefined && snr === undefined ? [] : [compact({ rssi, snr })];
}
