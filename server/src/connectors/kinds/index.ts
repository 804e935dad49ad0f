import type { ConnectorKind, ConnectorKindDescriptor, KindDeps } from '../connector-kind.js';
import { chirpstackMqttKind } from './chirpstack-mqtt.kind.js';
import { chirpstackUplinkKind } from './chirpstack-uplink.kind.js';
import { buildKind } from './derive.js';
import { iec104Kind } from './iec104.kind.js';
import { kafkaOutKind } from './kafka-out.kind.js';
import { loriotUplinkKind } from './loriot-uplink.kind.js';
import { lwm2mKind } from './lwm2m.kind.js';
import { modbusKind } from './modbus.kind.js';
import { mqttBrokerKind } from './mqtt-broker.kind.js';
import { mqttInKind } from './mqtt-in.kind.js';
import { mqttOutKind } from './mqtt-out.kind.js';
import { opcuaKind } from './opcua.kind.js';
import { smtpMailKind } from './smtp-mail.kind.js';
import { ttsUplinkKind } from './tts-uplink.kind.js';
import { webhookInKind } from './webhook-in.kind.js';
import { weatherKind } from './weather.kind.js';
import { webhookOutKind } from './webhook-out.kind.js';
import { websocketKind } from './websocket.kind.js';

export type ConnectorKinds = ReadonlyMap<string, ConnectorKind>;

/**
 * Every connector kind: the only list (docs/adr/0074-connector-kind-descriptors.md). The API's
 * `type` enum and settings schemas, the device-reference rules and docs/connector-kinds.md are
 * derived from it. A kind the spec names but
 * this version does not run yet would be a planned kind (planned.kind.ts): none is left.
 */
export const CONNECTOR_KIND_DESCRIPTORS: readonly ConnectorKindDescriptor[] = [
  mqttBrokerKind,
  webhookInKind,
  mqttInKind,
  ttsUplinkKind,
  chirpstackUplinkKind,
  chirpstackMqttKind,
  loriotUplinkKind,
  webhookOutKind,
  mqttOutKind,
  kafkaOutKind,
  smtpMailKind,
  iec104Kind,
  lwm2mKind,
  weatherKind,
  websocketKind,
  modbusKind,
  opcuaKind,
];

export const CONNECTOR_TYPES = CONNECTOR_KIND_DESCRIPTORS.map((k) => k.type);

const BY_TYPE = new Map(CONNECTOR_KIND_DESCRIPTORS.map((k) => [k.type, k]));

/** The descriptor of a kind; undefined for a type no kind has (rows written by an older version). */
export const kindDescriptor = (type: string): ConnectorKindDescriptor | undefined => BY_TYPE.get(type);

/** Types of the kinds a descriptor property picks, in registry order: the lists that used to be written by hand. */
export const kindTypesWhere = (pick: (kind: ConnectorKindDescriptor) => boolean): string[] =>
  CONNECTOR_KIND_DESCRIPTORS.filter(pick).map((k) => k.type);

/** Kinds whose connectors send e-mail (alarm mails, monitoring mails, the email rule command). */
export const MAIL_KIND_TYPES = kindTypesWhere((k) => k.delivers === 'mail');

/** Every connector kind with its runtime, by `type`. */
export function createConnectorKinds(deps: KindDeps): ConnectorKinds {
  return new Map(CONNECTOR_KIND_DESCRIPTORS.map((d) => [d.type, buildKind(d, deps)]));
}
