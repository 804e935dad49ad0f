import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import type { Metrics } from '../platform/metrics.js';

/**
 * The messages nodes of a cluster tell each other (ADR 0131). Each topic's payload is plain JSON:
 * senders encode Dates as ISO strings, receivers revive them (cluster-live.ts).
 */
export interface ClusterMessages {
  /** Device packet entries as the ingest worker encoded them (LiveHub.publishEncoded). */
  'live.packets': { deviceIds: string[]; entries: string[] };
  /** Committed twin state changes (LiveHub.publishStates), `timestamp` as ISO string. */
  'live.states': { changes: Array<Record<string, unknown>> };
  /** Committed alarm log changes (LiveHub.publishAlarms), dates as ISO strings. */
  'live.alarms': { entries: Array<Record<string, unknown>> };
  /** An in-memory cache of database data is stale on every node; `key` narrows it where the cache can. */
  invalidate: { cache: string; key?: string | undefined };
}

export type ClusterTopic = keyof ClusterMessages;
export type ClusterHandler<T extends ClusterTopic> = (payload: ClusterMessages[T]) => void;

/** Publish/subscribe between the nodes of a cluster; a node never hears its own messages. */
export interface ClusterBus {
  /** Whether other nodes exist to tell (false: the single-node bus, publishing is a no-op). */
  readonly clustered: boolean;
  publish<T extends ClusterTopic>(topic: T, payload: ClusterMessages[T]): void;
  subscribe<T extends ClusterTopic>(topic: T, handler: ClusterHandler<T>): void;
  close(): Promise<void>;
}

/** One node, no Redis: nothing to tell anyone, so the callers need no `if (clustered)`. */
export class LocalClusterBus implements ClusterBus {
  readonly clustered = false;
  publish(): void {}
  subscribe(): void {}
  async close(): Promise<void> {}
}

/**
 * The bus's metrics, registered on a single node too (all zero there), so the exposition is the same
 * in both modes.
 */
export class ClusterBusMetrics {
  readonly sent;
  readonly received;
  readonly dropped;
  readonly disconnects;
  /** Set by the Redis bus; a single node is never connected. */
  connected: () => boolean = () => false;

  constructor(metrics: Metrics) {
    this.sent = metrics.counter(
      'stellwerk_cluster_bus_sent_total',
      'Messages this node published on the cluster bus',
      ['topic'],
    );
    this.received = metrics.counter(
      'stellwerk_cluster_bus_received_total',
      'Messages from other nodes this node received on the cluster bus',
      ['topic'],
    );
    this.dropped = metrics.counter(
      'stellwerk_cluster_bus_dropped_total',
      'Messages this node could not publish because Redis was unreachable',
      ['topic'],
    );
    this.disconnects = metrics.counter(
      'stellwerk_cluster_bus_disconnects_total',
      'Times this node lost its connection to the cluster bus (Redis)',
    );
    metrics.gauge(
      'stellwerk_cluster_bus_connected',
      '1 while this node is connected to the cluster bus (Redis)',
      [],
      (g) => g.set(this.connected() ? 1 : 0),
    );
  }
}

const CHANNEL_PREFIX = 'stellwerk:bus:';
/** Reconnect delay: doubling from 50 ms to at most 2 s, so a restarted Redis is found within 2 s. */
export const reconnectDelayMs = (attempt: number): number => Math.min(2000, 50 * 2 ** Math.min(attempt, 6));

interface Envelope {
  /** The sending node (ctx.nodeId). */
  n: string;
  p: unknown;
}

export interface RedisClusterBusOptions {
  url: string;
  nodeId: string;
  log: FastifyBaseLogger;
  counters: ClusterBusMetrics;
}

/**
 * Redis pub/sub with one connection to publish and one to subscribe (a subscribed connection can do
 * nothing else). Pub/sub is fire-and-forget: a message published while a node is cut off from Redis
 * never reaches it, so a node that reconnects drops every cache (`onReconnect`) instead of trusting
 * that it heard every invalidation.
 */
export class RedisClusterBus implements ClusterBus {
  readonly clustered = true;
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly handlers = new Map<string, Array<(payload: unknown) => void>>();
  private readonly reconnectListeners: Array<() => void> = [];
  private down = false;
  private everReady = false;
  // The subscriber's PSUBSCRIBE is confirmed on its current connection: until then a message
  // published by another node would not reach this one.
  private subscribed = false;

  constructor(private readonly options: RedisClusterBusOptions) {
    const { counters } = options;
    // Arrow: read at each scrape, after the connections below exist.
    counters.connected = () => this.pub.status === 'ready' && this.sub.status === 'ready' && this.subscribed;
    const connection = {
      retryStrategy: reconnectDelayMs,
      // Queued publishes would arrive late and out of place after an outage; they count as dropped.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      lazyConnect: true,
    };
    this.pub = new Redis(options.url, { ...connection, connectionName: `stellwerk-pub-${options.nodeId}` });
    this.sub = new Redis(options.url, {
      ...connection,
      // The subscriber must queue its PSUBSCRIBE until connected. It subscribes again itself after a
      // reconnect (not ioredis' autoResubscribe, which sends it after announcing 'ready'), so that
      // the reconnect listeners run only once messages reach this node again.
      enableOfflineQueue: true,
      autoResubscribe: false,
      connectionName: `stellwerk-sub-${options.nodeId}`,
    });
    for (const connectionOf of [this.pub, this.sub]) {
      connectionOf.on('error', (error: Error) => this.lost(error));
      connectionOf.on('close', () => this.lost(null));
    }
    this.sub.on('close', () => (this.subscribed = false));
    this.pub.on('ready', () => this.ready());
    this.sub.on('ready', () => void this.subscribeAll().catch(() => undefined));
    this.sub.on('pmessageBuffer', (_pattern: Buffer, channel: Buffer, message: Buffer) =>
      this.deliver(channel.toString(), message),
    );
  }

  /**
   * Connects both connections; resolves once subscribed, rejects if Redis is unreachable now. The
   * subscriber's 'ready' handler subscribes on every connection, this first one included; start
   * subscribes as well (the same pattern twice is harmless) so that it can answer for it. A start
   * that failed is not fatal: the handler subscribes once Redis is reachable.
   */
  async start(): Promise<void> {
    await Promise.all([this.pub.connect(), this.sub.connect()]);
    await this.subscribeAll();
  }

  /** Called after each reconnect following an outage: messages may have been missed meanwhile. */
  onReconnect(listener: () => void): void {
    this.reconnectListeners.push(listener);
  }

  publish<T extends ClusterTopic>(topic: T, payload: ClusterMessages[T]): void {
    if (this.pub.status !== 'ready') {
      this.options.counters.dropped.inc({ topic });
      return;
    }
    const envelope: Envelope = { n: this.options.nodeId, p: payload };
    this.pub.publish(CHANNEL_PREFIX + topic, JSON.stringify(envelope)).then(
      () => this.options.counters.sent.inc({ topic }),
      () => this.options.counters.dropped.inc({ topic }),
    );
  }

  subscribe<T extends ClusterTopic>(topic: T, handler: ClusterHandler<T>): void {
    const list = this.handlers.get(topic) ?? [];
    list.push(handler as (payload: unknown) => void);
    this.handlers.set(topic, list);
  }

  async close(): Promise<void> {
    this.reconnectListeners.length = 0;
    await Promise.allSettled([this.pub.quit(), this.sub.quit()]);
    this.pub.disconnect();
    this.sub.disconnect();
  }

  private deliver(channel: string, message: Buffer): void {
    if (!channel.startsWith(CHANNEL_PREFIX)) return;
    const topic = channel.slice(CHANNEL_PREFIX.length);
    let envelope: Envelope;
    try {
      envelope = JSON.parse(message.toString()) as Envelope;
    } catch {
      this.options.log.warn({ topic }, 'Cluster bus: ignored a message that is not JSON');
      return;
    }
    if (envelope.n === this.options.nodeId) return;
    this.options.counters.received.inc({ topic });
    for (const handler of this.handlers.get(topic) ?? []) {
      try {
        handler(envelope.p);
      } catch (error) {
        this.options.log.error({ err: error, topic }, 'Cluster bus: a handler failed');
      }
    }
  }

  private lost(error: Error | null): void {
    if (!this.everReady || this.down) return;
    // Once per outage, not once per retry: a Redis down for an hour must not flood the log.
    this.down = true;
    this.options.counters.disconnects.inc();
    this.options.log.error(
      { err: error ?? undefined },
      'Cluster bus: lost the connection to Redis; live views and cache invalidation from other nodes pause until it is back',
    );
  }

  /**
   * (Re)subscribes on the subscriber's current connection. A failure is the connection's own (its
   * error and close handlers report it), and its next 'ready' subscribes again.
   */
  private async subscribeAll(): Promise<void> {
    await this.sub.psubscribe(`${CHANNEL_PREFIX}*`);
    if (this.sub.status !== 'ready') return;
    this.subscribed = true;
    this.ready();
  }

  private ready(): void {
    if (this.pub.status !== 'ready' || this.sub.status !== 'ready' || !this.subscribed) return;
    const wasDown = this.down;
    this.everReady = true;
    this.down = false;
    if (!wasDown) return;
    this.options.log.info('Cluster bus: connected to Redis again');
    for (const listener of this.reconnectListeners) listener();
  }
}
