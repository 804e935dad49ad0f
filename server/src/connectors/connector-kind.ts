import type { TObject } from 'typebox';
import type { DeliveryContext, OutgoingSender } from '../outgoing/delivery.js';
import type { SecretBox } from '../platform/crypto/secret-box.js';
import type { CheckProblem } from '../platform/http/problem-detail.js';
import type { Connector } from './connector.entity.js';
import type { PacketMeta } from '../ingest/packet-meta.js';
import type { DownlinkSender, RemoteDeviceDeleter } from '../downlinks/downlink-delivery.js';
import type { NetworkServerEvent } from './network-events.js';
import type { LinkHost } from './links/link.types.js';
import type { Lwm2mListenPolicy } from './lwm2m/lwm2m.link.js';
import type { WeatherDeps } from './kinds/weather/weather.link.js';

/**
 * What a kind actually does in this version; the console shows kinds without capabilities
 * as "stored only" (docs/adr/0071-connector-kinds.md, 0074-connector-kind-descriptors.md).
 * - `broker`: devices log in to the embedded broker with issued credentials.
 * - `webhook`: an incoming webhook URL (`apiEndpoint`) is issued.
 * - `subscribe`: the server keeps a client connection to an external system.
 * - `receives` / `sends`: packets flow in (ingest) / out (outgoing) through this kind.
 * - `downlink`: messages can be queued to devices through this kind.
 * - `monitoring`: the kind keeps a connection whose state connector monitoring reports.
 * - `remote-delete`: devices can be deleted on the system behind the connector.
 */
export const CONNECTOR_CAPABILITIES = [
  'broker',
  'webhook',
  'subscribe',
  'receives',
  'sends',
  'downlink',
  'monitoring',
  'remote-delete',
] as const;
export type ConnectorCapability = (typeof CONNECTOR_CAPABILITIES)[number];

/** Device fields a kind can require or normalise (names as in the XAPI device body). */
export type DeviceIdentityField = 'devEui' | 'endDeviceId' | 'externalId';

/** How devices on a connector of this kind are identified (the spec's "connector-specific required fields"). */
export interface DeviceIdentityRules {
  /** Device fields a device on such a connector must have. */
  required: readonly DeviceIdentityField[];
  /** LoRaWAN: EUIs are case-insensitive; stored and matched lower-case. */
  lowerCaseEui: boolean;
  /** The Things Stack: an EndDevice ID is made from the EUI (or device_id) when none is given. */
  endDeviceId: boolean;
  /**
   * The device_id is one level of the MQTT topic the device publishes on (the embedded broker's
   * `…/devices/{device_id}/up`): no `/`, which would split it, and no `+` or `#`, which no PUBLISH
   * topic may hold.
   */
  deviceIdIsTopicLevel?: boolean;
}

/** How a kind that subscribes through the mqtt-in runtime reads its broker's messages. */
export interface MqttMessageReader {
  /** The topic filters a connector of the kind subscribes to, from its settings. */
  topics(config: Record<string, unknown>): string[];
  /** One message into packets, events and log entries; throws `AppError` for one it cannot read. */
  read(topic: string, payload: Buffer, connector: Connector): NetworkMessage;
}

/** What a kind's runtime may use; built once by services.ts. */
export interface KindDeps {
  mqttIn: {
    start(connector: Connector): Promise<void>;
    stop(connectorId: string): Promise<void>;
    /** Kinds other than mqtt-in that subscribe to an external broker register their reader. */
    register?(type: string, reader: MqttMessageReader): void;
    /** Publishes with the connector's running client (downlinks). */
    publish(connectorId: string, topic: string, payload: Buffer): Promise<void>;
  };
  /** The embedded broker: downlinks on a device's down topic. */
  broker: { publishDownlink(connectorId: string, deviceKey: string, payload: Buffer): Promise<void> };
  /** What outgoing kinds deliver with (sealed secrets, the door to their targets). */
  outgoing: DeliveryContext;
  /** Field-protocol kinds keep their connection to a peer here (links/link-runtime.ts). */
  links: LinkHost;
  /** The weather kind: twin locations and the operator's shortest poll interval. */
  weather?: WeatherDeps;
  /**
   * The server's data directory: kinds that keep files (the OPC UA client's PKI) keep them under it.
   * Absent where kinds are built without a server (tests of descriptors).
   */
  dataDir?: string;
  /** What LwM2M connectors may listen on; absent: the variables' defaults. */
  lwm2m?: Lwm2mListenPolicy;
}

/** The behaviour of a kind that needs server services. */
export type KindRuntime = Pick<
  ConnectorKind,
  'webhookMessage' | 'start' | 'stop' | 'sender' | 'downlink' | 'remoteDelete'
>;

/**
 * A connector kind as one self-describing module (docs/adr/0074-connector-kind-descriptors.md).
 * It needs no server to be read, so the docs table, the OpenAPI and the console derive from it.
 */
export interface ConnectorKindDescriptor {
  type: string;
  direction: 'incoming' | 'outgoing';
  /** One sentence for the generated kinds table (docs/connector-kinds.md). */
  summary: string;
  /** Empty for kinds the data model admits but that do nothing yet. */
  capabilities: readonly ConnectorCapability[];
  /** The kind's `config`; secrets are marked `writeOnly: true` (sealed on write, masked on read). */
  settings: TObject;
  /** Planned kinds: free-form settings whose secret-looking keys are sealed. */
  freeForm?: boolean;
  /** Rules the schema cannot express (cross-field, URL parsing, PEM labels, topic grammar). */
  check?(config: Record<string, unknown>): ConfigProblem[];
  devices: DeviceIdentityRules;
  /**
   * Kinds with the `monitoring` capability: how connector monitoring tells connected from
   * disconnected (`connection`: our client to an external system; `broker-clients`: clients
   * logged in to the embedded broker with this connector's credentials).
   */
  monitoring?: ConnectorMonitoring;
  /**
   * Outgoing kinds: what one message is (`http` request, `mqtt` publish, `kafka` record, `mail`).
   * Rule commands and the mail pickers choose connectors by it, not by kind.
   */
  delivers?: OutgoingMessageKind;
  runtime?(deps: KindDeps): KindRuntime;
}

export const CONNECTOR_MONITORING = ['connection', 'broker-clients'] as const;
export type ConnectorMonitoring = (typeof CONNECTOR_MONITORING)[number];
export const OUTGOING_MESSAGE_KINDS = ['http', 'mqtt', 'kafka', 'mail'] as const;
export type OutgoingMessageKind = (typeof OUTGOING_MESSAGE_KINDS)[number];

/** Devices on a connector of this kind need nothing beyond `device_id`. */
export const PLAIN_DEVICES: DeviceIdentityRules = { required: [], lowerCaseEui: false, endDeviceId: false };

/** One settings problem: its path under `/config`, a keyword and params where one fits, English text. */
export type ConfigProblem = CheckProblem;

/** One packet a webhook body yields: the sender's `device_id` and the payload bytes for the driver. */
export interface WebhookItem {
  deviceKey: string;
  payload: Buffer;
  /** What the network server reported besides the payload (fPort, gateways, …). */
  meta?: PacketMeta;
}

/** What of a webhook request besides its body a kind may read: the path after the token, the query. */
export interface WebhookRequest {
  /** The part of the URL path after `/webhooks/{token}`, without a leading slash (`""`, `"uplink"`, `"downlink/ack"`). */
  path: string;
  query: Readonly<Record<string, string>>;
}

/** A connector log entry a network server asked for (ChirpStack `log` events). */
export interface NetworkLogEntry {
  level: 'info' | 'warn' | 'error';
  message: string;
  details?: Record<string, unknown>;
}

/**
 * What one network-server message yields: device packets (uplinks, and joins, device status and
 * locations as packets without payload), events for the downlink queue and gateways, log entries.
 */
export interface NetworkMessage {
  items: WebhookItem[];
  events: NetworkServerEvent[];
  logs: NetworkLogEntry[];
}

export interface KindContext {
  secretBox: SecretBox;
}

/**
 * A kind as the connector service uses it: its descriptor with validation and secret handling
 * derived, and its runtime (kinds/registry.ts `createConnectorKinds`). Incoming kinds that keep a
 * connection open (mqtt-in) implement `start`/`stop`; the connector service calls them on create,
 * activate, deactivate and delete.
 */
export interface ConnectorKind {
  descriptor: ConnectorKindDescriptor;
  type: string;
  direction: 'incoming' | 'outgoing';
  /** Empty for kinds the data model admits but that do nothing yet. */
  capabilities: readonly ConnectorCapability[];
  /** Problems with the kind's settings as `{ path, keyword, params, message }`; empty when valid. */
  validate(config: Record<string, unknown>): ConfigProblem[];
  /** Settings as stored: secrets sealed; a masked or missing secret keeps the previous one. */
  prepareConfig?(
    config: Record<string, unknown>,
    previous: Record<string, unknown> | undefined,
    ctx: KindContext,
  ): Record<string, unknown>;
  /** Settings as returned by the API: secrets masked. */
  publicConfig?(config: Record<string, unknown>): Record<string, unknown>;
  /**
   * Webhook kinds: one request (its message type may come from the body, the path after the token or
   * the query) into packets, network-server events and log entries. Throws `AppError` for a request the
   * kind cannot accept (the webhook handler logs it to the connector log); `errors.notFound` for a path
   * it does not know.
   */
  webhookMessage?(body: unknown, connector: Connector, request: WebhookRequest): NetworkMessage;
  start?(connector: Connector): Promise<void>;
  stop?(connectorId: string): Promise<void>;
  /** Outgoing kinds: delivers messages the dispatcher (server/src/outgoing/) queued. */
  sender?: OutgoingSender;
  /** Kinds with the `downlink` capability: delivers queued downlinks (server/src/downlinks/). */
  downlink?: DownlinkSender;
  /** Kinds with the `remote-delete` capability: deletes devices on the network server. */
  remoteDelete?: RemoteDeviceDeleter;
}
