import type { AuthenticateError, Client, PublishPacket, Subscription } from 'aedes';
import type { FastifyBaseLogger } from 'fastify';
import {
  MAX_ARRAY_ITEMS,
  PacketRefusedError,
  type IncomingPacket,
  type PacketSink,
} from '../ingest/ingest.types.js';
import { resendSession, type ResendSession, type StoredResends } from './stored-resends.js';
import type { PacketMeta } from '../ingest/packet-meta.js';
import { ConcurrencyLimit } from '../platform/concurrency-limit.js';
import { LiveClients, type ConnectionLimits, type LimitRefusal } from './live-clients.js';
import { Mqtt5Bridge, ReasonCode } from './mqtt5-bridge.js';
import { topicAcl } from './topic-acl.js';

/**
 * The broker's hooks: who may connect, publish, subscribe and receive. Failure behaviour:
 * - CONNECT: unknown or inactive credentials → "bad user name or password" (a known username with
 *   another password is written to that connector's log, rate-limited); a will outside the
 *   client's own up topics → "not authorized"; the credential store failing → "server unavailable".
 *   Client ids are per connector (Aedes knows a client as `{connectorId}/{clientId}`): the same id
 *   under another connector is another client and session, so no tenant can end, replace or resume
 *   another's; within a connector a second connection with an id replaces the first (MQTT-3.1.4-2).
 *   A connector or account at its connection limit (live-clients.ts) → "server unavailable" (MQTT 5:
 *   0x97 quota exceeded), so devices retry later; the connector log says why, at most once per window.
 *   Credentials are checked AUTH_CONCURRENCY at a time; further CONNECTs wait in arrival order.
 * - PUBLISH: allowed only to the connector's own `…/devices/{device_id}/up`; the packet is appended to
 *   the durable packet store and only then authorized, so Aedes' PUBACK (QoS 1) follows the commit.
 *   Refused (topic, over MAX_ARRAY_ITEMS, store busy or failed): MQTT 3.1.1 has no negative
 *   acknowledgement, so the connection is closed without PUBACK and the client resends after
 *   reconnecting; MQTT 5 gets a PUBACK with a reason code and keeps its connection.
 * - A packet over the size limit closes the connection (broker.service.ts); the connector log says so.
 * - Nothing a client publishes is delivered to any client; clients receive only server downlinks on
 *   their own connector's topics.
 */

/** What the broker needs from the connectors domain. */
export interface BrokerConnectors {
  /**
   * An active `mqtt-broker` connector with these credentials (its account loaded), or null;
   * `wrongPassword` hears of a known username with another password (for that connector's log).
   */
  authenticateBroker(
    username: string,
    password: string,
    wrongPassword?: (connectorId: string) => void,
  ): Promise<BrokerConnector | null>;
  log(
    connectorId: string,
    level: 'debug' | 'info' | 'warn' | 'error',
    message: string,
    details?: Record<string, unknown>,
  ): Promise<void> | void;
  recordPackets?(connectorId: string, result: 'in' | 'failed', count?: number): void;
  onDeactivated?(listener: (connectorId: string) => void): void;
}

export interface BrokerConnector {
  id: string;
  account: { path: readonly string[] };
  config: Record<string, unknown>;
}

export interface BrokerSession {
  connectorId: string;
  /** The client id as the client sent it (Aedes knows the client by `{connectorId}/{clientId}`). */
  clientId: string;
  /** Date.now() at the CONNECT, and the order of its messages while resends are looked up. */
  resends: ResendSession;
}

type Refusal = { reasonCode: number; code: string; message: string; details?: Record<string, unknown> };

// Refused packets go here: no client can subscribe to a `$` topic, so Aedes delivers them nowhere.
const REFUSED_TOPIC = '$stellwerk/refused';
// One connector log entry per connector and refusal code in this window; the rest are counted.
const LOG_WINDOW_MS = 10_000;
// Credential checks in flight at once: each holds one of the ORM pool's 10 connections, and a CONNECT
// flood must leave the rest to the API. The others wait in the broker, in arrival order.
const AUTH_CONCURRENCY = 4;

const authError = (returnCode: AuthenticateError['returnCode'], message: string): AuthenticateError =>
  Object.assign(new Error(message), { returnCode });

/** The connector's own connection limit (`maxConnections` in its settings), if it sets one. */
const maxConnectionsOf = (connector: BrokerConnector): number | undefined =>
  typeof connector.config.maxConnections === 'number' ? connector.config.maxConnections : undefined;

/** Items of a payload that is a JSON array; null for anything else (objects, binary). */
export function jsonArrayLength(payload: Buffer): number | null {
  let i = 0;
  while (
    i < payload.length &&
    (payload[i] === 0x20 || payload[i] === 0x0a || payload[i] === 0x0d || payload[i] === 0x09)
  )
    i++;
  if (payload[i] !== 0x5b) return null;
  try {
    const value: unknown = JSON.parse(payload.toString('utf8'));
    return Array.isArray(value) ? value.length : null;
  } catch {
    return null;
  }
}

export class BrokerPolicy {
  private readonly sessions = new WeakMap<Client, BrokerSession>();
  /** Sessions by the client's connection (the stream, or the MQTT 5 bridge), for refusals below Aedes. */
  private readonly byConnection = new WeakMap<object, BrokerSession>();
  private readonly live: LiveClients<Client>;
  private readonly wills = new WeakMap<Client, string | null>();
  private readonly logged = new Map<string, { at: number; suppressed: number }>();
  private readonly authChecks = new ConcurrencyLimit(AUTH_CONCURRENCY);

  constructor(
    private readonly deps: {
      connectors: BrokerConnectors;
      packets: PacketSink;
      log: FastifyBaseLogger;
      clock: () => Date;
      limits: ConnectionLimits;
      /** Counts a connection refused at CONNECT (metrics), by reason. */
      countRefusal?: (reason: string) => void;
      /** Cluster mode: resends of stored messages are acknowledged, not stored twice (ADR 0130). */
      resends?: StoredResends;
    },
  ) {
    this.live = new LiveClients(deps.limits);
  }

  session(client: Client | null): BrokerSession | undefined {
    return client ? this.sessions.get(client) : undefined;
  }

  /** Live clients of a connector (deactivated, deleted, credentials rotated → they are closed). */
  clientsOf(connectorId: string): Client[] {
    return this.live.of(connectorId);
  }

  clientCount(connectorId: string): number {
    return this.live.count(connectorId);
  }

  get liveClients(): number {
    return this.live.size;
  }

  readonly preConnect = (
    client: Client,
    packet: { will?: { topic: string } },
    done: (e: Error | null, ok: boolean) => void,
  ) => {
    this.wills.set(client, packet.will?.topic ?? null);
    done(null, true);
  };

  readonly authenticate = (
    client: Client,
    username: Readonly<string | undefined>,
    password: Readonly<Buffer | undefined>,
    done: (error: AuthenticateError | null, success: boolean | null) => void,
  ) => {
    const clientId = client.id;
    if (!username || !password) return done(authError(4, 'bad user name or password'), false);
    const secret = password.toString('utf8');
    const wrongPassword = (connectorId: string) =>
      this.logRefusal(connectorId, 'BAD_CREDENTIALS', 'Connection refused: wrong password', {
        clientId,
        username,
      });
    // A client that gave up while waiting for its turn needs no database query.
    this.authChecks
      .run(async () =>
        client.closed ? null : this.deps.connectors.authenticateBroker(username, secret, wrongPassword),
      )
      .then(
        (connector) => {
          if (!connector) return done(authError(4, 'bad user name or password'), false);
          // Gone while its credentials were checked: Aedes drops the answer; it must not be counted live.
          if (client.closed) return done(authError(3, 'connection closed'), false);
          const willTopic = this.wills.get(client);
          if (willTopic != null && topicAcl.uplinkDevice(connector.id, willTopic) === null) {
            this.logRefusal(connector.id, 'WILL_NOT_ALLOWED', 'Connection refused: will topic not allowed', {
              clientId,
              topic: willTopic,
            });
            return done(authError(5, 'will topic not allowed'), false);
          }
          // Sessions are kept per connector: the same client id under another connector is another session.
          const key = `${connector.id}/${clientId}`;
          const refusal = this.live.admit(client, key, {
            id: connector.id,
            accountPath: connector.account.path,
            maxConnections: maxConnectionsOf(connector),
          });
          if (refusal) return this.refuseConnection(client, connector.id, clientId, refusal, done);
          client.conn.once('close', () => this.live.release(client));
          client.id = key;
          const session = { connectorId: connector.id, clientId, resends: resendSession() };
          this.sessions.set(client, session);
          this.byConnection.set(client.conn, session);
          done(null, true);
        },
        (error: unknown) => {
          this.deps.log.error({ err: error }, 'broker authentication failed');
          done(authError(3, 'server unavailable'), false);
        },
      );
  };

  private refuseConnection(
    client: Client,
    connectorId: string,
    clientId: string,
    refusal: LimitRefusal,
    done: (error: AuthenticateError | null, success: boolean | null) => void,
  ): void {
    this.deps.countRefusal?.(`${refusal.scope}-limit`);
    this.logRefusal(
      connectorId,
      'CONNECTION_LIMIT',
      refusal.scope === 'connector'
        ? `Connection refused: this connector's limit of ${refusal.limit} connected clients is reached`
        : `Connection refused: the account's limit of ${refusal.limit} connected MQTT clients is reached`,
      { clientId, scope: refusal.scope, limit: refusal.limit },
    );
    // 3.1.1 has no "quota exceeded"; "server unavailable" makes clients retry later, as they should.
    if (client.conn instanceof Mqtt5Bridge) client.conn.refuseConnect(ReasonCode.quotaExceeded);
    done(authError(3, 'connection limit reached'), false);
  }

  // Runs for every PUBLISH on the broker's thread: no closure is made per packet except the two
  // settling the append (and the resend check's), so a busy broker makes less garbage.
  readonly authorizePublish = (
    client: Client | null,
    packet: PublishPacket,
    callback: (error?: Error | null) => void,
  ) => {
    const session = this.session(client);
    // No session: a will of a client this broker no longer knows; nothing can vouch for it.
    if (!client || !session) return callback(new Error('not authorized'));
    const { connectorId } = session;
    // Retained uplinks would serve no one (nobody subscribes to up topics) and grow memory.
    packet.retain = false;
    const deviceKey = topicAcl.uplinkDevice(connectorId, packet.topic);
    if (deviceKey === null) {
      return this.refuse(client, session, packet, callback, {
        reasonCode: ReasonCode.notAuthorized,
        code: 'TOPIC_NOT_ALLOWED',
        message: 'Publish refused: topic not allowed',
        details: { topic: packet.topic.slice(0, 300) },
      });
    }
    const payload = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload;
    const items = jsonArrayLength(payload);
    if (items !== null && items > MAX_ARRAY_ITEMS) {
      return this.refuse(client, session, packet, callback, {
        reasonCode: ReasonCode.payloadFormatInvalid,
        code: 'TOO_MANY_ITEMS',
        message: `Packet refused: a JSON array of ${items} items; at most ${MAX_ARRAY_ITEMS} are allowed per packet`,
        details: { deviceId: deviceKey, items, limit: MAX_ARRAY_ITEMS },
      });
    }
    const incoming: IncomingPacket = {
      connectorId,
      deviceKey,
      payload,
      source: 'mqtt',
      receivedAt: this.deps.clock(),
    };
    const { resends, packets } = this.deps;
    const appended =
      resends && packet.qos > 0 && packet.messageId !== undefined
        ? resends.appendUnlessStored(
            session.resends,
            { connectorId, deviceKey, payload, packetId: packet.messageId, dup: packet.dup },
            (meta: PacketMeta) => packets.append({ ...incoming, meta }),
          )
        : packets.append(incoming);
    appended.then(
      () => {
        this.deps.connectors.recordPackets?.(connectorId, 'in');
        callback(null);
      },
      (error: unknown) => {
        const code = error instanceof PacketRefusedError ? error.code : 'INGEST_FAILED';
        this.refuse(client, session, packet, callback, {
          reasonCode: code === 'INGEST_BUSY' ? ReasonCode.quotaExceeded : ReasonCode.unspecifiedError,
          code,
          message: `Packet refused: ${(error as Error).message}`,
          details: { deviceId: deviceKey },
        });
      },
    );
  };

  readonly authorizeSubscribe = (
    client: Client,
    subscription: Subscription,
    callback: (error: Error | null, subscription?: Subscription | null) => void,
  ) => {
    const session = this.session(client);
    if (session && topicAcl.canSubscribe(session.connectorId, subscription.topic)) {
      return callback(null, subscription);
    }
    if (session) {
      this.logRefusal(
        session.connectorId,
        'SUBSCRIBE_NOT_ALLOWED',
        'Subscription refused: topic not allowed',
        {
          clientId: session.clientId,
          topic: subscription.topic.slice(0, 300),
        },
      );
    }
    // A refused filter (SUBACK 0x80 / 0x87), the connection stays.
    callback(null, null);
  };

  readonly authorizeForward = <P extends { topic: string; clientId?: string }>(
    client: Client,
    packet: P,
  ): P | null => {
    const session = this.session(client);
    // Only the server's own downlinks reach clients: nothing a client published is ever delivered.
    if (!session || packet.clientId) return null;
    return topicAcl.canReceive(session.connectorId, packet.topic) ? packet : null;
  };

  private refuse(
    client: Client,
    session: BrokerSession,
    packet: PublishPacket,
    callback: (error?: Error | null) => void,
    refusal: Refusal,
  ): void {
    this.deps.connectors.recordPackets?.(session.connectorId, 'failed');
    this.logRefusal(session.connectorId, refusal.code, refusal.message, {
      clientId: session.clientId,
      ...refusal.details,
    });
    if (client.conn instanceof Mqtt5Bridge) {
      if (packet.qos > 0 && packet.messageId !== undefined)
        client.conn.refuse(packet.messageId, refusal.reasonCode);
      packet.topic = REFUSED_TOPIC;
      return callback(null);
    }
    callback(Object.assign(new Error(refusal.message), { code: refusal.code }));
  }

  /**
   * A packet over the size limit on `connection` (the connection is being closed): the connector's
   * log says so when the client had logged in (a CONNECT too large belongs to no connector).
   */
  packetTooLarge(connection: object, limit: number): void {
    const session = this.byConnection.get(connection);
    if (!session) return;
    this.deps.connectors.recordPackets?.(session.connectorId, 'failed');
    this.logRefusal(
      session.connectorId,
      'PACKET_TOO_LARGE',
      `Connection closed: a packet larger than ${limit} bytes`,
      { clientId: session.clientId, limit },
    );
  }

  /** Connector log, at most one entry per connector and code per LOG_WINDOW_MS (a flood must not become one). */
  private logRefusal(
    connectorId: string,
    code: string,
    message: string,
    details: Record<string, unknown>,
  ): void {
    const key = `${connectorId}:${code}`;
    const now = Date.now();
    const last = this.logged.get(key);
    if (last && now - last.at < LOG_WINDOW_MS) {
      last.suppressed++;
      return;
    }
    this.logged.set(key, { at: now, suppressed: 0 });
    const suppressed = last?.suppressed ? { similarBefore: last.suppressed } : {};
    void this.deps.connectors.log(connectorId, 'warn', message, { code, ...details, ...suppressed });
  }
}
