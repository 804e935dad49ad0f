import type { ConnectorKind, ConnectorKindDescriptor, KindDeps } from '../connector-kind.js';
import { chirpstackNetworkServer } from '../../downlinks/delivery/chirpstack.js';
import { buildKind } from './derive.js';
import { kafkaOutKind } from './kafka-out.kind.js';
import { mqttBrokerKind } from './mqtt-broker.kind.js';
import { mqttInKind } from './mqtt-in.kind.js';
import { mqttOutKind } from './mqtt-out.kind.js';
import { plannedKind } from './planned.kind.js';
import { smtpMailKind } from './smtp-mail.kind.js';
import { ttsUplinkKind } from './tts-uplink.kind.js';
import { webhookInKind } from './webhook-in.kind.js';
import { webhookOutKind } from './webhook-out.kind.js';

export type ConnectorKinds = ReadonlyMap<string, ConnectorKind>;

/**
 * Every connector kind: the only list (docs/adr/0074-connector-kind-descriptors.md). The API's
 * `type` enum and settings schemas, the device-reference rules and docs/connector-kinds.md are
 * derived from it. Planned kinds are named by the spec and stored, but do nothing yet.
 */
export const CONNECTOR_KIND_DESCRIPTORS: readonly ConnectorKindDescriptor[] = [
  mqttBrokerKind,
  webhookInKind,
  mqttInKind,
  ttsUplinkKind,
  webhookOutKind,
  mqttOutKind,
  kafkaOutKind,
  smtpMailKind,
  plannedKind('iec104', 'incoming', 'IEC 60870-5-104 telecontrol.'),
  plannedKind('lwm2m', 'incoming', 'OMA LwM2M devices.'),
  plannedKind('weather', 'incoming', 'Weather data for a location.'),
  plannedKind('websocket', 'incoming', 'Packets over a WebSocket.'),
  {
    ...plannedKind('chirpstack-uplink', 'incoming', 'ChirpStack v4 LoRaWAN uplinks.', {
      required: [],
      lowerCaseEui: true,
      endDeviceId: false,
    }),
    // Free-form settings `apiUrl` and `apiToken` (sealed) reach ChirpStack's REST API.
    summary: 'ChirpStack v4: downlinks and device deletion through its REST API (`apiUrl`, `apiToken`).',
    capabilities: ['downlink', 'remote-delete'],
    runtime: ({ outgoing }) => chirpstackNetworkServer(outgoing),
  },
];

export const CONNECTOR_TYPES = CONNECTOR_KIND_DESCRIPTORS.map((k) => k.type);

/** Every connector kind with its runtime, by `type`. */
export function createConnectorKinds(deps: KindDeps): ConnectorKinds {
  return new Map(CONNECTOR_KIND_DESCRIPTORS.map((d) => [d.type, buildKind(d, deps)]));
}
