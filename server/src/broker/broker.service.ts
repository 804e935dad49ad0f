import fs from 'node:fs/promises';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import type { IncomingMessage } from 'node:http';
import { Aedes, type AedesPublishPacket } from 'aedes';
import type { FastifyBaseLogger } from 'fastify';
import type { BrokerBackends } from '../cluster/broker-backends.js';
import type { Config } from '../config.js';
import type { PacketSink } from '../ingest/ingest.types.js';
import { StartupError } from '../platform/db/startup-error.js';
import type { Lifecycle } from '../platform/lifecycle.js';
import type { Metrics } from '../platform/metrics.js';
import { openFileLimit } from '../platform/open-files.js';
import { BrokerPolicy, type BrokerConnectors } from './broker-policy.js';
import { brokerConnectionCap, SocketBudget, type BrokerConnectionCap } from './connection-cap.js';
import { connectProtocolVersion, FrameSizeGuard } from './mqtt-framing.js';
import { Mqtt5Bridge } from './mqtt5-bridge.js';
import { downlinkTopic } from './topic-acl.js';
import { storedResends, type StoredResends } from './stored-resends.js';
import { coalesceWrites } from './write-coalescer.js';

/**
 * The embedded MQTT broker (Aedes): TCP on STELLWERK_MQTT_PORT, optional TLS, and WebSocket at `/mqtt`
 * on the HTTP port (broker.routes.ts hands those streams to `accept`). Every connection is looked at
 * before Aedes sees it: MQTT 5 CONNECTs go through the Mqtt5Bridge, every packet header is checked
 * against the size limit, and a connection without a CONNECT in time is closed. Sockets beyond the
 * broker's connection cap (connection-cap.ts: the open-file limit minus a reserve for PostgreSQL, HTTP
 * and the rest of the server) are closed as they arrive. The hooks (credentials, per-connector and
 * per-account connection limits, ACL, durable append before PUBACK) are in broker-policy.ts.
 */

// At most one server-log warning about the full broker per window.
const OVER_CAPACITY_LOG_MS = 10_000;

export interface BrokerPorts {
  mqtt: number | undefined;
  mqtts: number | undefined;
}

export interface BrokerDeps {
  config: Config;
  log: FastifyBaseLogger;
  metrics: Metrics;
  clock: () => Date;
  packets: PacketSink;
  connectors: BrokerConnectors;
  /** Cluster mode: Aedes' emitter and persistence in Redis (cluster/broker-backends.ts); unset: in memory. */
  backends?: (() => BrokerBackends) | undefined;
}

export class BrokerService implements Lifecycle {
  readonly name = 'mqtt-broker';
  readonly policy: BrokerPolicy;
  private aedes: Aedes | undefined;
  private backends: BrokerBackends | undefined;
  private tcp: net.Server | undefined;
  private tls: tls.Server | undefined;
  /** Connections not yet handed to Aedes (waiting for their CONNECT). */
  private readonly pending = new Set<Duplex>();
  private readonly connections;
  private readonly refusedConnections;
  private readonly messages;
  /** The ports actually bound (0 in the configuration picks a free one). */
  readonly ports: BrokerPorts = { mqtt: undefined, mqtts: undefined };
  /** Set at start: the cap on broker sockets and what it was derived from. */
  cap: BrokerConnectionCap | undefined;
  private budget = new SocketBudget(null);
  private overCapacityLoggedAt = 0;
  private overCapacitySince = 0;

  /** Cluster mode: resends of stored messages are recognised (stored-resends.ts). */
  private readonly resends: StoredResends | undefined;

  constructor(private readonly deps: BrokerDeps) {
    const { databaseUrl, redisUrl } = deps.config;
    this.resends = storedResends(deps.metrics, redisUrl && databaseUrl ? { databaseUrl } : undefined);
    this.policy = new BrokerPolicy({
      connectors: deps.connectors,
      packets: deps.packets,
      log: deps.log,
      clock: deps.clock,
      limits: {
        perConnector: deps.config.mqttMaxConnectionsPerConnector,
        perAccount: deps.config.mqttMaxConnectionsPerAccount,
      },
      countRefusal: (reason) => this.refusedConnections.inc({ reason }),
      ...(this.resends ? { resends: this.resends } : {}),
    });
    deps.connectors.onDeactivated?.((connectorId) => this.disconnectConnector(connectorId));
    this.connections = deps.metrics.counter(
      'stellwerk_broker_connections_total',
      'MQTT connections accepted',
      ['transport', 'protocol'],
    );
    this.refusedConnections = deps.metrics.counter(
      'stellwerk_broker_connections_closed_total',
      'MQTT connections closed by the broker before or instead of CONNECT handling',
      ['reason'],
    );
    this.messages = deps.metrics.counter(
      'stellwerk_broker_messages_total',
      'MQTT PUBLISH messages: in, accepted from clients; out, delivered to subscribed clients',
      ['direction'],
    );
    deps.metrics.gauge('stellwerk_broker_clients', 'MQTT clients connected and authenticated', [], (gauge) =>
      gauge.set(this.policy.liveClients),
    );
    deps.metrics.gauge(
      'stellwerk_broker_sockets',
      'Broker sockets open (TCP, TLS, WebSocket; before and after CONNECT)',
      [],
      (gauge) => gauge.set(this.budget.open),
    );
    deps.metrics.gauge(
      'stellwerk_broker_connection_cap',
      'Broker sockets allowed at once (open-file limit minus the reserve); -1: no cap',
      [],
      (gauge) => gauge.set(this.budget.max ?? -1),
    );
  }

  async start(): Promise<void> {
    const { config } = this.deps;
    this.cap = brokerConnectionCap(await openFileLimit(), {
      maxConnections: config.mqttMaxConnections,
      reservedFiles: config.mqttReservedFiles,
    });
    this.budget = new SocketBudget(this.cap.max);
    this.backends = this.deps.backends?.();
    const aedes = new Aedes({
      ...(this.backends ? { mq: this.backends.mq, persistence: this.backends.persistence } : {}),
      connectTimeout: config.mqttConnectTimeoutMs,
      // Keep-alive is honoured as the client asks (1.5 × its interval); 0 means none, as in MQTT.
      keepaliveLimit: 0,
      preConnect: this.policy.preConnect,
      authenticate: this.policy.authenticate,
      authorizePublish: this.policy.authorizePublish,
      authorizeSubscribe: this.policy.authorizeSubscribe,
      authorizeForward: (client, packet) => {
        const forwarded = this.policy.authorizeForward(client, packet);
        if (forwarded) this.messages.inc({ direction: 'out' });
        return forwarded;
      },
    });
    // Counted there: an uplink accepted by authorizePublish reaches no 'publish' event.
    skipUndeliverableUplinks(aedes, () => this.messages.inc({ direction: 'in' }));
    await aedes.listen();
    aedes.on('clientError', (client, error) =>
      this.deps.log.debug({ clientId: client.id, err: error.message }, 'mqtt client error'),
    );
    this.aedes = aedes;

    this.tcp = net.createServer((socket) => {
      if (this.admit(socket)) this.accept(socket, 'tcp');
    });
    this.ports.mqtt = await listen(this.tcp, config.mqttHost, config.mqttPort, 'STELLWERK_MQTT_PORT');
    if (config.mqttTlsPort !== undefined) {
      const [cert, key] = await Promise.all([
        readPem(config.mqttTlsCert!, 'STELLWERK_MQTT_TLS_CERT'),
        readPem(config.mqttTlsKey!, 'STELLWERK_MQTT_TLS_KEY'),
      ]);
      try {
        this.tls = tls.createServer({ cert, key }, (socket) => this.accept(socket, 'tls'));
        // Counted from the raw socket on: a TLS handshake holds a descriptor too.
        this.tls.on('connection', (socket: net.Socket) => this.admit(socket));
      } catch (error) {
        throw new StartupError(
          `STELLWERK_MQTT_TLS_CERT / STELLWERK_MQTT_TLS_KEY: not a usable certificate and key (${(error as Error).message})`,
        );
      }
      this.ports.mqtts = await listen(
        this.tls,
        config.mqttHost,
        config.mqttTlsPort,
        'STELLWERK_MQTT_TLS_PORT',
      );
    }
    const { max, openFiles, reserved } = this.cap;
    this.deps.log.info(
      {
        mqttPort: this.ports.mqtt,
        mqttTlsPort: this.ports.mqtts,
        mqttHost: config.mqttHost,
        mqttConnectionCap: max,
        openFiles,
        reservedFiles: reserved,
      },
      `MQTT broker listening on ${config.mqttHost}:${this.ports.mqtt}${this.ports.mqtts ? ` (TLS ${this.ports.mqtts})` : ''}`,
    );
  }

  /** Stops accepting, closes every client (Aedes waits for in-flight hooks), then the listeners. */
  async stop(): Promise<void> {
    const closing = [this.tcp, this.tls].map(
      (server) => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
    );
    for (const stream of this.pending) stream.destroy();
    const aedes = this.aedes;
    this.aedes = undefined;
    if (aedes) await new Promise<void>((resolve) => aedes.close(() => resolve()));
    await this.backends?.close();
    this.backends = undefined;
    await Promise.all(closing);
  }

  /** Takes a client connection (TCP, TLS, or a WebSocket stream from `/mqtt`). */
  accept(stream: Duplex, transport: 'tcp' | 'tls' | 'ws', request?: IncomingMessage): void {
    const aedes = this.aedes;
    if (!aedes) return void stream.destroy();
    // TCP and TLS sockets were counted as they arrived; a WebSocket is counted from its upgrade.
    if (transport === 'ws' && !this.admit(stream)) return;
    const { mqttConnectTimeoutMs, mqttMaxPacketBytes } = this.deps.config;
    this.pending.add(stream);
    let buffered: Buffer = Buffer.alloc(0);
    const close = (reason: string) => {
      this.refusedConnections.inc({ reason });
      cleanup();
      stream.destroy();
    };
    const timer = setTimeout(() => close('connect-timeout'), mqttConnectTimeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      this.pending.delete(stream);
      stream.off('data', onData);
    };
    const onData = (chunk: Buffer) => {
      buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
      const version = connectProtocolVersion(buffered);
      if (version === undefined && buffered.length < 64) return;
      if (version === undefined || version === null) return close('not-mqtt');
      cleanup();
      stream.pause();
      stream.unshift(buffered);
      this.connections.inc({ transport, protocol: version === 5 ? 'mqtt5' : 'mqtt3' });
      this.handOver(aedes, stream, version === 5, mqttMaxPacketBytes, request);
    };
    stream.on('data', onData);
    stream.on('error', () => stream.destroy());
    stream.once('close', cleanup);
  }

  /** Counts a new broker socket against the cap, or closes it at once when the broker is full. */
  private admit(socket: Duplex): boolean {
    if (this.budget.admit(socket)) return true;
    socket.destroy();
    this.refusedConnections.inc({ reason: 'over-capacity' });
    // A flood must not become one log line per socket: one warning per window, with the count.
    this.overCapacitySince++;
    const now = Date.now();
    if (now - this.overCapacityLoggedAt >= OVER_CAPACITY_LOG_MS) {
      this.deps.log.warn(
        { refused: this.overCapacitySince, ...this.cap },
        `MQTT connections refused: the broker's cap of ${this.budget.max} sockets is reached`,
      );
      this.overCapacityLoggedAt = now;
      this.overCapacitySince = 0;
    }
    return false;
  }

  private handOver(
    aedes: Aedes,
    stream: Duplex,
    mqtt5: boolean,
    maxBytes: number,
    request?: IncomingMessage,
  ) {
    const guard = new FrameSizeGuard(maxBytes);
    coalesceWrites(stream);
    // What Aedes knows as the client's connection: the stream, or the MQTT 5 bridge around it.
    let connection: object = stream;
    const tooLarge = () => {
      if (stream.destroyed) return;
      this.refusedConnections.inc({ reason: 'packet-too-large' });
      this.policy.packetTooLarge(connection, maxBytes);
      stream.destroy();
    };
    if (mqtt5) {
      // The bridge reads the socket itself; the guard sees each chunk first.
      stream.prependListener('data', (chunk: Buffer) => {
        if (!guard.feed(chunk)) tooLarge();
      });
      const bridge = new Mqtt5Bridge(stream, { maxPacketBytes: maxBytes });
      connection = bridge;
      aedes.handle(bridge, request);
      return;
    }
    aedes.handle(stream, request);
    // Aedes reads in paused mode ('readable'); a 'data' listener added after it only observes what
    // Aedes reads, before Aedes parses it.
    stream.on('data', (chunk: Buffer) => {
      if (!guard.feed(chunk)) tooLarge();
    });
  }

  /** Clients of a connector connected now (connector monitoring: connected/disconnected). */
  clientCount(connectorId: string): number {
    return this.policy.clientCount(connectorId);
  }

  /** Closes every client of a connector (deactivated, deleted, credentials rotated). */
  disconnectConnector(connectorId: string): void {
    for (const client of this.policy.clientsOf(connectorId)) client.close();
  }

  /** Sends a downlink to the connector's clients subscribed to that device's down topic. */
  publishDownlink(connectorId: string, deviceKey: string, payload: Buffer, qos: 0 | 1 = 1): Promise<void> {
    const aedes = this.aedes;
    if (!aedes) return Promise.reject(new Error('The MQTT broker is not running'));
    return new Promise((resolve, reject) =>
      aedes.publish(
        {
          cmd: 'publish',
          topic: downlinkTopic(connectorId, deviceKey),
          payload,
          qos,
          retain: false,
          dup: false,
        },
        (error) => (error ? reject(error) : resolve()),
      ),
    );
  }
}

function listen(server: net.Server, host: string, port: number, variable: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(
          new StartupError(
            `${variable} ${port} is already in use on ${host}; set ${variable} to a free port (0 picks one)`,
          ),
        );
      } else if (error.code === 'EACCES') {
        reject(
          new StartupError(`${variable} ${port} needs privileges this user lacks; use a port above 1023`),
        );
      } else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') {
        reject(new StartupError(`STELLWERK_MQTT_HOST ${host} is not an address of this machine`));
      } else reject(error);
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
}

async function readPem(file: string, variable: string): Promise<Buffer> {
  try {
    return await fs.readFile(file);
  } catch (error) {
    throw new StartupError(
      `${variable}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
}

/**
 * A device's uplink is stored by `authorizePublish` (before its PUBACK) and can never reach any
 * client: the ACL refuses subscriptions to up topics and `authorizeForward` drops everything a client
 * published. Aedes would still route each one through its publish pipeline (packet copy, retained
 * store, topic match) — about a tenth of the broker's CPU per message — so client-published packets
 * end here. Server-side publishes (downlinks, $SYS, `client` null) take Aedes' normal path.
 */
function skipUndeliverableUplinks(aedes: Aedes, onUplink: () => void): void {
  // At run time Aedes' publish is (packet, client, done) or (packet, done); its types know only the latter.
  type RuntimePublish = (
    packet: AedesPublishPacket,
    client?: unknown,
    done?: (error?: Error) => void,
  ) => void;
  const publish = (aedes.publish as unknown as RuntimePublish).bind(aedes);
  const skipping: RuntimePublish = (packet, client, done) => {
    if (client && typeof client !== 'function') {
      onUplink();
      return done?.();
    }
    publish(packet, client, done);
  };
  aedes.publish = skipping;
}
