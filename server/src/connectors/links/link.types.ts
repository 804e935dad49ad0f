import type { FastifyBaseLogger } from 'fastify';
import type { DialOut } from '../../outgoing/dial/dial-out.js';
import type { Connector, ConnectorLogLevel } from '../connector.entity.js';
import type { WebhookItem } from '../connector-kind.js';

/**
 * A link: the connection a field-protocol kind keeps to its peer (a WebSocket server, an OPC UA
 * server, a Modbus or IEC 104 outstation, a weather API it polls, or the UDP socket an LwM2M server
 * listens on). The kind only opens one; the link runtime (link-runtime.ts) keeps it: reconnects
 * with backoff, status for connector monitoring, the connector log and the counters in /metrics.
 */
export interface LinkSession {
  /** Resolves, never rejects, once the link is lost, with why ("peer closed the connection"). */
  readonly closed: Promise<string>;
  /** Closes it for good: the connector was stopped, deactivated, deleted or its settings changed. */
  close(): Promise<void>;
  /**
   * Whether the link counts as connected while open; absent means always. A server-side link (the
   * LwM2M server's socket) is open without any peer: it is connected while a peer is registered.
   */
  connected?(): boolean;
}

/** What a kind may use while its link is open. */
export interface LinkContext {
  /** The connector as stored; secrets in `config` are sealed (use `secret`). */
  readonly connector: Connector;
  /** The one door to tenant-configured targets: every socket and HTTP request goes through it. */
  readonly dial: DialOut;
  /** A sealed setting opened, or undefined when it is not set. */
  secret(key: string): string | undefined;
  /**
   * Stores one packet. Resolves once it is durable, or refused for good (logged and counted as
   * failed: the kind may acknowledge it to its peer); rejects while the store cannot take it now
   * (the kind should not acknowledge it, so the peer sends it again).
   */
  packet(item: WebhookItem): Promise<void>;
  /** A connector-log entry (what the tenant reads); never secrets. */
  log(level: ConnectorLogLevel, message: string, details?: Record<string, unknown>): void;
  /** Aborted when the link is closed for good: timers and loops of the kind stop on it. */
  readonly signal: AbortSignal;
  /** For the server's own log (causes a tenant must not read). */
  readonly serverLog: FastifyBaseLogger;
  /**
   * A value the kind keeps across the reconnects of this link (made by `create` on first use), until
   * the connector is stopped, changed or taken over by another node: e.g. what a peer may send again
   * on the next connection.
   */
  kept<T>(key: string, create: () => T): T;
}

/**
 * Thrown by `open` for a failure whose message a tenant may read (a refused login, a protocol
 * error the peer answered with). Anything else reads "could not connect" to the tenant, so a
 * connector cannot be used to map the server's network (outgoing/dial/connect-failure.ts).
 */
export class LinkError extends Error {
  constructor(
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'LinkError';
  }
}

export interface LinkDriver<S extends LinkSession = LinkSession> {
  /** Where the link goes, for log lines ("ws://plant.example:8080/feed"); never secrets. */
  target(connector: Connector): string;
  /** Opens the link; resolves once it is usable, rejects with why it is not. */
  open(ctx: LinkContext): Promise<S>;
}

/** What kinds see of the link runtime (connector-kind.ts `KindDeps.links`). */
export interface LinkHost {
  /** Called when the kinds are built, before the server starts its links. */
  register(type: string, driver: LinkDriver): void;
  start(connector: Connector): Promise<void>;
  stop(connectorId: string): Promise<void>;
  /** The open session of a connector (downlinks, the console's browse), or undefined while it is down. */
  session(connectorId: string): LinkSession | undefined;
}

/**
 * The runtime of a kind whose connectors keep a link: `start`/`stop` go to the link runtime, which
 * opens the link with `driver`. Called from a descriptor's `runtime`.
 */
export function linkKindRuntime(
  links: LinkHost,
  type: string,
  driver: LinkDriver,
): { start(connector: Connector): Promise<void>; stop(connectorId: string): Promise<void> } {
  links.register(type, driver);
  return { start: (connector) => links.start(connector), stop: (connectorId) => links.stop(connectorId) };
}
