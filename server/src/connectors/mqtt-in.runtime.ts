import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { IClientOptions, MqttClient } from 'mqtt';
import { isPermanentRefusal, MAX_CLIENT_PAYLOAD_BYTES, type PacketSink } from '../ingest/ingest.types.js';
import { couldNotConnect, refusalOf } from '../outgoing/dial/connect-failure.js';
import type { DialOut } from '../outgoing/dial/dial-out.js';
import { TARGET_REFUSED } from '../outgoing/target-guard.js';
import type { SecretBox } from '../platform/crypto/secret-box.js';
import type { Lifecycle } from '../platform/lifecycle.js';
import { Connector } from './connector.entity.js';
import type { MqttMessageReader, WebhookItem } from './connector-kind.js';
import type { ConnectorOwner } from './connector-owner.js';
import type { ConnectorTelemetry } from './connector-telemetry.js';
import type { NetworkEvents } from './network-events.js';
import { openSecret } from './kinds/config-fields.js';
import { deviceKeyOf, type MqttInConfig } from './kinds/mqtt-in.kind.js';
import {
  SeenMessages,
  SESSION_EXPIRY_SECONDS,
  sharedOf,
  sharedTopics,
  SlotKeeper,
  slotClientId,
  storedAlready,
  committed,
} from './mqtt-in.shared.js';

/**
 * One mqtt.js client per active mqtt-in connector.
 *
 * Delivery, in order:
 * - QoS 1: the PUBACK goes out only after `append` resolved (mqtt.js `handleMessage`), so the
 *   external broker keeps every message we have not stored. mqtt.js handles incoming packets one at a
 *   time, so a connector ingests at most one packet per packet-store commit (fine for bridges; the
 *   embedded broker is the high-rate door).
 * - A transient refusal (store busy or failing) is not acknowledged; the connection is dropped so
 *   the broker redelivers it after the reconnect (`clean: false` keeps the session).
 * - A permanent refusal (no device id, too large) is acknowledged, counted as failed and logged:
 *   redelivering it would never succeed.
 * - QoS 0 messages go the same way; there is just no acknowledgement to hold back.
 * Reconnects back off from 1 s to 60 s; connection changes go to the connector log.
 *
 * A connector with a shared-subscription group has one client per slot instead (mqtt-in.shared.ts):
 * all of them on a single node; in cluster mode the slots this node holds, a message acknowledged
 * once committed to `packets`, and a redelivery (DUP) already stored acknowledged, not stored again.
 *
 * The broker URL is the tenant's, so the client connects through DialOut (SSRF protection at every
 * (re)connect). The connector log tells a tenant what the broker answered (a refused login) and
 * when the SSRF protection refused the target; an attempt that never reached an MQTT answer reads
 * the same whatever the network did (refused, timed out, reset, TLS, not MQTT): the cause goes to
 * the server's log at debug level.
 */

const MIN_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60_000;

interface Running {
  connectorId: string;
  client: MqttClient;
  qos: 0 | 1;
  connected: boolean;
  /** Connected and the broker answered the SUBSCRIBE. */
  subscribed: boolean;
  /** The last message logged for a failed attempt: a run of equal failures is logged once. */
  lastError: string | undefined;
  /** This attempt's failure is logged already (a refusal by the broker or by the guard). */
  attemptLogged: boolean;
}

export class MqttInRuntime implements Lifecycle {
  readonly name = 'mqtt-in';
  /** By connector id, or `<connector id>/<slot>` for a shared subscription's slots. */
  private readonly clients = new Map<string, Running>();
  private readonly slots: SlotKeeper | undefined;
  private readonly seen: SeenMessages | undefined;
  /** Kinds besides mqtt-in that subscribe through this runtime, with how they read their messages. */
  private readonly readers = new Map<string, MqttMessageReader>();
  private stopped = false;

  constructor(
    private readonly deps: {
      orm: MikroORM;
      sink: PacketSink;
      telemetry: ConnectorTelemetry;
      secretBox: SecretBox;
      dial: DialOut;
      log: FastifyBaseLogger;
      /** Where downlink and gateway events of network-server kinds go. */
      networkEvents?: NetworkEvents;
      /** Cluster mode: shared slots held through PostgreSQL, redeliveries recognised through Redis. */
      cluster?: { databaseUrl: string; redisUrl: string };
      owner?: ConnectorOwner; // cluster mode: a client without a shared subscription runs on one node
    },
  ) {
    if (deps.cluster) {
      this.slots = new SlotKeeper({
        orm: deps.orm,
        databaseUrl: deps.cluster.databaseUrl,
        log: deps.log,
        clients: {
          openSlot: (connector, slot) => this.openSlot(connector, slot),
          closeSlot: (id, slot) => this.close(`${id}/${slot}`),
        },
      });
      this.seen = new SeenMessages(deps.cluster.redisUrl, deps.log);
    }
  }

  /**
   * A kind that subscribes like mqtt-in but reads its messages its own way (chirpstack-mqtt):
   * registered when the kinds are built, before the server starts its clients.
   */
  register(type: string, reader: MqttMessageReader): void {
    this.readers.set(type, reader);
  }

  /** Server start: a client for every active connector of mqtt-in and the registered kinds. */
  async start(): Promise<void> {
    this.stopped = false;
    const types = ['mqtt-in', ...this.readers.keys()];
    const connectors = await this.deps.orm.em.fork().find(Connector, { type: { $in: types }, active: true });
    for (const connector of connectors) await this.startClient(connector);
    this.slots?.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.slots?.stop();
    await Promise.all([...this.clients.keys()].map((key) => this.close(key)));
    await this.seen?.close();
  }

  private ofConnector(connectorId: string): Running[] {
    return [...this.clients.values()].filter((r) => r.connectorId === connectorId);
  }

  /** Connected and subscribed: messages published from now on reach the packet store. */
  isReady(connectorId: string): boolean {
    return this.ofConnector(connectorId).some((r) => r.subscribed);
  }

  /** Publishes with the connector's client (downlinks); rejects while it is not connected. */
  async publish(connectorId: string, topic: string, payload: Buffer): Promise<void> {
    const running = this.ofConnector(connectorId).find((r) => r.connected);
    if (!running) throw new Error('the connector is not connected to its broker');
    await running.client.publishAsync(topic, payload, { qos: running.qos });
  }

  /** (Re)starts the connector's client (or its shared slots) with its current settings. */
  async startClient(connector: Connector): Promise<void> {
    await this.stopClient(connector.id);
    if (this.stopped) return;
    const config = connector.config as unknown as MqttInConfig;
    const shared = connector.type === 'mqtt-in' ? sharedOf(config) : undefined;
    if (!shared) {
      const owner = this.deps.owner;
      const retry = () => this.startClient(connector);
      if (owner && !(await owner.claim(connector.id, retry, () => this.stopClient(connector.id)))) return;
      return this.open(connector.id, connector, this.options(connector, config), config.topics);
    }
    // In cluster mode the keeper decides which slots run here; it looks again at once.
    if (this.slots) return this.slots.poke();
    for (let slot = 0; slot < shared.slots; slot++) this.openSlot(connector, slot);
  }

  private openSlot(connector: Connector, slot: number): void {
    if (this.stopped) return;
    const config = connector.config as unknown as MqttInConfig;
    const shared = sharedOf(config)!;
    const options: IClientOptions = {
      ...this.options(connector, config),
      clientId: slotClientId(connector, config, slot),
      protocolVersion: 5,
      properties: { sessionExpiryInterval: SESSION_EXPIRY_SECONDS },
    };
    this.open(`${connector.id}/${slot}`, connector, options, sharedTopics(shared.group, config.topics));
  }

  private open(key: string, connector: Connector, options: IClientOptions, configTopics: string[]): void {
    const reader = this.readers.get(connector.type);
    const config = connector.config as unknown as MqttInConfig;
    const topics = reader ? reader.topics(connector.config) : configTopics;
    const id = connector.id;
    const qos = config.qos ?? 1;
    let client: MqttClient;
    try {
      client = this.deps.dial.mqtt(config.url, options);
    } catch (error) {
      void this.deps.telemetry.write(id, 'error', `Cannot use the settings: ${(error as Error).message}`);
      return;
    }
    const clientId = options.clientId ?? id;
    const running: Running = {
      connectorId: id,
      client,
      qos,
      connected: false,
      subscribed: false,
      lastError: undefined,
      attemptLogged: false,
    };
    this.clients.set(key, running);
    // mqtt.js calls handleMessage one packet at a time and sends the PUBACK only after its callback
    // (customHandleAcks would do the same, but mqtt.js honours it for MQTT 5 only).
    client.handleMessage = (packet, callback) => {
      if (packet.cmd !== 'publish') return callback();
      const payload = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload;
      const store = () =>
        reader
          ? this.ingestRead(connector, reader, packet.topic, payload, packet.dup)
          : this.ingest(connector, config, packet.topic, payload, packet.dup);
      const ingest =
        this.seen && packet.qos === 1 && packet.messageId !== undefined
          ? this.seen.once(
              SeenMessages.key(id, clientId, packet.messageId, packet.topic, payload),
              packet.dup,
              store,
            )
          : store();
      ingest.then(
        () => callback(),
        (error: Error) => {
          callback(error);
          // Not acknowledged: drop the connection so the broker redelivers it after the reconnect.
          client.stream.destroy();
        },
      );
    };

    client.on('connect', (connack) => {
      running.connected = true;
      running.lastError = undefined;
      client.options.reconnectPeriod = MIN_BACKOFF_MS;
      void this.deps.telemetry.write(id, 'info', `Connected to ${config.url}`, {
        sessionPresent: connack.sessionPresent,
      });
      client.subscribe(topics, { qos }, (error, granted) => {
        if (error) {
          void this.deps.telemetry.write(id, 'error', `Subscribe failed: ${error.message}`);
          return;
        }
        running.subscribed = true;
        const refused = (granted ?? []).filter((g) => g.qos === 128).map((g) => g.topic);
        if (refused.length)
          void this.deps.telemetry.write(id, 'warn', 'Subscription refused', { topics: refused });
      });
    });
    client.on('close', () => {
      if (running.connected) void this.deps.telemetry.write(id, 'warn', `Disconnected from ${config.url}`);
      else if (!running.attemptLogged)
        this.attemptFailed(id, running, couldNotConnect('the broker'), 'CONNECT_FAILED');
      running.attemptLogged = false;
      running.connected = false;
      running.subscribed = false;
      const next = Math.min((client.options.reconnectPeriod ?? MIN_BACKOFF_MS) * 2, MAX_BACKOFF_MS);
      client.options.reconnectPeriod = next;
    });
    client.on('error', (error) => {
      const refused = refusalOf(error);
      if (refused) return this.attemptFailed(id, running, refused.message, TARGET_REFUSED);
      // mqtt.js gives a broker's CONNACK refusal its MQTT reason code (a number), network errors a string.
      if (typeof (error as { code?: unknown }).code === 'number') {
        return this.attemptFailed(id, running, `Connection error: ${error.message}`);
      }
      // The network's story (refused port, timeout, TLS, not MQTT) is the operators' alone.
      // Host and port only: a URL may carry the broker password.
      this.deps.dial.connectFailed(error, { connectorId: id, target: new URL(config.url).host });
    });
  }

  /** Logs why an attempt failed, once for a run of equal failures. */
  private attemptFailed(id: string, running: Running, message: string, code?: string): void {
    running.attemptLogged = true;
    if (running.lastError === message) return;
    running.lastError = message;
    void this.deps.telemetry.write(id, 'error', message, code ? { code } : undefined);
  }

  async stopClient(connectorId: string): Promise<void> {
    await this.slots?.release(connectorId);
    await this.deps.owner?.release(connectorId);
    const keys = [...this.clients].filter(([, r]) => r.connectorId === connectorId).map(([k]) => k);
    await Promise.all(keys.map((key) => this.close(key)));
  }

  private async close(key: string): Promise<void> {
    const running = this.clients.get(key);
    if (!running) return;
    this.clients.delete(key);
    await running.client.endAsync(true).catch(() => undefined);
  }

  /** Refuses a message for good: counted as failed and logged; the caller then acknowledges it. */
  private refuser(connectorId: string, topic: string) {
    return (reason: string, details: Record<string, unknown>): void => {
      this.deps.telemetry.record(connectorId, 'failed');
      void this.deps.telemetry.write(connectorId, 'warn', reason, { topic, ...details });
    };
  }

  /** Resolves when the packet may be acknowledged (stored, or refused for good); rejects otherwise. */
  private async ingest(
    connector: Connector,
    config: MqttInConfig,
    topic: string,
    message: Buffer,
    redelivered = false,
  ): Promise<void> {
    const id = connector.id;
    const refuse = this.refuser(id, topic);
    if (message.length > MAX_CLIENT_PAYLOAD_BYTES) {
      return refuse(`Packet refused: ${message.length} bytes is more than ${MAX_CLIENT_PAYLOAD_BYTES}`, {});
    }
    const deviceKey = deviceKeyOf(config, topic, message);
    if (!deviceKey) return refuse('Packet refused: no device id in topic or payload', {});
    await this.append(id, topic, { deviceKey, payload: message }, refuse, redelivered);
  }

  /**
   * A registered kind's message: its packets stored like mqtt-in's (same acknowledgement rules), then
   * its downlink and gateway events and log entries. A message the kind cannot read is refused for
   * good (acknowledged and logged).
   */
  private async ingestRead(
    connector: Connector,
    reader: MqttMessageReader,
    topic: string,
    message: Buffer,
    redelivered = false,
  ): Promise<void> {
    const id = connector.id;
    const refuse = this.refuser(id, topic);
    if (message.length > MAX_CLIENT_PAYLOAD_BYTES) {
      return refuse(`Packet refused: ${message.length} bytes is more than ${MAX_CLIENT_PAYLOAD_BYTES}`, {});
    }
    let read;
    try {
      read = reader.read(topic, message, connector);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      return refuse(`Packet refused: ${(error as Error).message}`, typeof code === 'string' ? { code } : {});
    }
    for (const entry of read.logs)
      await this.deps.telemetry.write(id, entry.level, entry.message, entry.details);
    for (const item of read.items) await this.append(id, topic, item, refuse, redelivered);
    await this.deps.networkEvents?.emit(read.events);
  }

  /** Stores one packet; a permanent refusal is logged, a transient one rejects (no PUBACK). */
  private async append(
    id: string,
    topic: string,
    item: WebhookItem,
    refuse: (reason: string, details: Record<string, unknown>) => void,
    redelivered: boolean,
  ): Promise<void> {
    if (redelivered && this.seen && (await storedAlready(this.deps.orm, id, item, topic))) return;
    const receivedAt = new Date();
    try {
      await this.deps.sink.append({
        connectorId: id,
        deviceKey: item.deviceKey,
        payload: item.payload,
        source: 'mqtt-in',
        receivedAt,
        // Topics on an external broker vary (device id in a segment or in the payload): keep it.
        meta: { ...item.meta, topic },
      });
    } catch (error) {
      if (isPermanentRefusal(error)) {
        return refuse(`Packet refused: ${error.message}`, { code: error.code });
      }
      this.deps.telemetry.record(id, 'failed');
      throw error;
    }
    if (this.seen) await committed(this.deps.orm, id, item, receivedAt);
    this.deps.telemetry.record(id, 'in');
  }

  private options(connector: Connector, config: MqttInConfig): IClientOptions {
    const ctx = { secretBox: this.deps.secretBox };
    const password = openSecret(connector.config, 'password', ctx);
    const key = openSecret(connector.config, 'clientKey', ctx);
    return {
      clientId: config.clientId || `stellwerk-${connector.id.replace(/-/g, '').slice(-16)}`,
      clean: false,
      protocolVersion: config.protocolVersion ?? 4,
      reconnectPeriod: MIN_BACKOFF_MS,
      connectTimeout: 10_000,
      keepalive: 30,
      ...(config.username ? { username: config.username } : {}),
      ...(password !== undefined ? { password } : {}),
      ...(config.serverCa ? { ca: config.serverCa } : {}),
      ...(config.clientCert ? { cert: config.clientCert } : {}),
      ...(key !== undefined ? { key } : {}),
      rejectUnauthorized: config.rejectUnauthorized ?? true,
    };
  }
}
