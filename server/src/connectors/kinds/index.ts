import type { DeliveryContext } from '../../outgoing/delivery.js';
import type { ConnectorKind } from '../connector-kind.js';
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

/** Kinds the spec names that are stored but do nothing yet (docs/adr/0071-connector-kinds.md). */
const PLANNED: Array<[string, 'incoming' | 'outgoing']> = [
  ['iec104', 'incoming'],
  ['lwm2m', 'incoming'],
  ['weather', 'incoming'],
  ['websocket', 'incoming'],
  ['chirpstack-uplink', 'incoming'],
];

/** Every connector kind, by `type`. Adding a kind means adding a line here and its own file. */
export function createConnectorKinds(deps: {
  mqttIn: Parameters<typeof mqttInKind>[0];
  /** What outgoing kinds deliver with (sealed secrets, the door to their targets). */
  outgoing: DeliveryContext;
}): ConnectorKinds {
  const kinds: ConnectorKind[] = [
    mqttBrokerKind,
    webhookInKind,
    mqttInKind(deps.mqttIn),
    ttsUplinkKind,
    webhookOutKind(deps.outgoing),
    mqttOutKind(deps.outgoing),
    kafkaOutKind(deps.outgoing),
    smtpMailKind(deps.outgoing),
    ...PLANNED.map(([type, direction]) => plannedKind(type, direction)),
  ];
  return new Map(kinds.map((kind) => [kind.type, kind]));
}

export const CONNECTOR_TYPES = [
  'mqtt-broker',
  'webhook-in',
  'mqtt-in',
  'tts-uplink',
  'webhook-out',
  'mqtt-out',
  'kafka-out',
  'smtp-mail',
  ...PLANNED.map(([type]) => type),
] as const;
