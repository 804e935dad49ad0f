import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { Connector, type ConnectorLogLevel } from '../connectors/connector.entity.js';
import type { ConnectorKinds } from '../connectors/kinds/index.js';
import type {
  OutgoingDispatch,
  OutgoingMessage,
  OutgoingOrigin,
  OutgoingSendResult,
} from '../integration/ports.js';
import { newId } from '../platform/crypto/ids.js';
import { safeErrorMessage } from '../platform/db/database-errors.js';
import { errors } from '../platform/errors.js';
import type { Lifecycle } from '../platform/lifecycle.js';
import type { Metrics } from '../platform/metrics.js';
import { ConnectorQueue, type QueuedMessage } from './connector-queue.js';
import { backoffMs, DeliveryError, deliveryOptions, type OutgoingSender } from './delivery.js';

/**
 * Hands messages to outgoing connectors (rules, flows, connector monitoring, alarm reports).
 *
 * Failure behaviour:
 * - `send` only queues: it never waits for a target, so a slow or dead target cannot slow the
 *   caller (the ingest path, a rule). Each connector has its own bounded in-memory queue
 *   (`queueSize`, default 1000); when it is full the overflow policy drops the newest or the oldest
 *   message. Drops are counted (`/metrics`) and logged to the connector log, rate-limited.
 * - One worker per connector delivers in queue order, one message at a time. A retryable failure
 *   is retried with exponential backoff (`retryDelayMs` doubling, `maxAttempts`), meanwhile the
 *   queue fills; a final failure (or the last attempt) drops the message as `failed` with a
 *   connector log entry.
 * - Queued messages live in memory only: a restart loses them (stated in docs/outgoing-connectors.md).
 * - Deactivating or deleting a connector drops what is queued for it and closes its client.
 */

const CACHE_MS = 2000;
const DROP_LOG_EVERY_MS = 10_000;
const STOP_GRACE_MS = 5000;

type Result = 'sent' | 'failed' | 'dropped';

interface Lane {
  queue: ConnectorQueue;
  running: Promise<void> | undefined;
  /** Drops not yet written to the connector log (rate limit). */
  unloggedDrops: number;
  dropTimer: NodeJS.Timeout | undefined;
  failuresInRow: number;
}

interface Cached {
  connector: Connector | null;
  at: number;
}

export class OutgoingDispatcher implements OutgoingDispatch, Lifecycle {
  readonly name = 'outgoing-dispatcher';
  private readonly lanes = new Map<string, Lane>();
  private readonly cache = new Map<string, Cached>();
  private readonly messages;
  private readonly retries;
  private stopped = false;
  private readonly sleepers = new Set<() => void>();

  constructor(
    private readonly deps: {
      orm: MikroORM;
      kinds: ConnectorKinds;
      /** The connector log (ConnectorTelemetry.write): never throws. */
      connectorLog: (
        id: string,
        level: ConnectorLogLevel,
        message: string,
        details?: Record<string, unknown>,
      ) => Promise<void>;
      metrics: Metrics;
      log: FastifyBaseLogger;
    },
  ) {
    const m = deps.metrics;
    this.messages = m.counter(
      'stellwerk_outgoing_messages_total',
      'Outgoing messages per connector by result',
      ['connector', 'result'],
    );
    this.retries = m.counter(
      'stellwerk_outgoing_retries_total',
      'Delivery attempts that failed and were retried',
      ['connector'],
    );
    m.gauge(
      'stellwerk_outgoing_queue_depth',
      'Messages waiting per outgoing connector',
      ['connector'],
      (gauge) => {
        gauge.reset();
        for (const [id, lane] of this.lanes) gauge.set({ connector: id }, lane.queue.depth);
      },
    );
  }

  async send(
    accountId: string,
    connectorId: string,
    message: OutgoingMessage,
    origin: OutgoingOrigin,
  ): Promise<OutgoingSendResult> {
    const connector = await this.load(connectorId);
    if (!connector || connector.account.id !== accountId) throw errors.notFound('Connector', connectorId);
    const kind = this.deps.kinds.get(connector.type);
    if (kind?.direction !== 'outgoing' || !kind.sender) {
      throw errors.unprocessable(
        'NOT_OUTGOING_CONNECTOR',
        `A ${connector.type} connector does not send messages`,
        [{ connectorId, type: connector.type }],
      );
    }
    if (!connector.active || this.stopped) return { queued: false, reason: 'inactive' };
    const lane = this.laneFor(connectorId, connector);
    lane.queue.configure(deliveryOptions(connector.config));
    const result = lane.queue.push({
      id: `msg_${newId().replace(/-/g, '')}`,
      message,
      origin,
      enqueuedAt: Date.now(),
    });
    if (result.queued) lane.running ??= this.work(connectorId, lane);
    return result;
  }

  /** Messages waiting for the connector (tests, metrics). */
  depth(connectorId: string): number {
    return this.lanes.get(connectorId)?.queue.depth ?? 0;
  }

  /** Deactivated or deleted: what waits is dropped, the client closed. */
  connectorGone(connectorId: string): void {
    this.cache.delete(connectorId);
    const lane = this.lanes.get(connectorId);
    if (lane) for (const item of lane.queue.drain()) this.dropped(connectorId, lane, item);
    void this.release(connectorId);
  }

  async start(): Promise<void> {
    this.stopped = false;
  }

  /** Lets in-flight deliveries end (up to STOP_GRACE_MS), then closes every client. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const wake of this.sleepers) wake();
    const running = [...this.lanes.values()].map((l) => l.running).filter((r) => r !== undefined);
    await Promise.race([
      Promise.all(running),
      new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref()),
    ]);
    for (const lane of this.lanes.values()) clearTimeout(lane.dropTimer);
    for (const kind of this.deps.kinds.values()) await kind.sender?.close().catch(() => undefined);
  }

  private laneFor(connectorId: string, connector: Connector): Lane {
    let lane = this.lanes.get(connectorId);
    if (!lane) {
      const created: Lane = {
        queue: new ConnectorQueue(deliveryOptions(connector.config), (item) =>
          this.dropped(connectorId, created, item),
        ),
        running: undefined,
        unloggedDrops: 0,
        dropTimer: undefined,
        failuresInRow: 0,
      };
      lane = created;
      this.lanes.set(connectorId, lane);
    }
    return lane;
  }

  private async work(connectorId: string, lane: Lane): Promise<void> {
    try {
      for (let item = lane.queue.take(); item && !this.stopped; item = lane.queue.take()) {
        await this.deliver(connectorId, lane, item);
      }
    } catch (error) {
      this.deps.log.error({ err: error, connectorId }, 'outgoing: worker failed');
    } finally {
      lane.running = undefined;
      // A message queued while the loop was ending gets a worker of its own.
      if (lane.queue.depth > 0 && !this.stopped) lane.running = this.work(connectorId, lane);
    }
  }

  private async deliver(connectorId: string, lane: Lane, item: QueuedMessage): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const connector = await this.load(connectorId).catch(() => undefined);
      if (connector === null || connector?.active === false)
        return this.dropped(connectorId, lane, item, 'connector inactive or deleted');
      const sender = connector && this.senderOf(connector);
      let error: unknown;
      if (connector && sender) {
        try {
          await sender.deliver(connector, item.message, { messageId: item.id, attempt });
          return this.sent(connectorId, lane);
        } catch (caught) {
          error = caught;
        }
      } else {
        error = new DeliveryError(
          'The connector could not be read (database unavailable)',
          true,
          'CONNECTOR_UNAVAILABLE',
        );
      }
      const options = deliveryOptions(connector?.config ?? {});
      const retryable = !(error instanceof DeliveryError) || error.retryable;
      if (!retryable || attempt >= options.maxAttempts || this.stopped) {
        return this.failed(connectorId, lane, item, error, attempt);
      }
      this.retries.inc({ connector: connectorId });
      this.deps.log.debug({ err: error, connectorId, attempt }, 'outgoing: delivery failed, retrying');
      await this.sleep(backoffMs(options, attempt));
    }
  }

  private senderOf(connector: Connector): OutgoingSender | undefined {
    return this.deps.kinds.get(connector.type)?.sender;
  }

  private count(connectorId: string, result: Result): void {
    this.messages.inc({ connector: connectorId, result });
  }

  private sent(connectorId: string, lane: Lane): void {
    this.count(connectorId, 'sent');
    if (lane.failuresInRow > 0) {
      void this.deps.connectorLog(
        connectorId,
        'info',
        `Delivering again after ${lane.failuresInRow} failed message(s)`,
      );
      lane.failuresInRow = 0;
    }
  }

  private failed(
    connectorId: string,
    lane: Lane,
    item: QueuedMessage,
    error: unknown,
    attempts: number,
  ): void {
    this.count(connectorId, 'failed');
    lane.failuresInRow += 1;
    // One entry per failed message would flood the log while a target is down: the first of a run, then every 100th.
    if (lane.failuresInRow === 1 || lane.failuresInRow % 100 === 0) {
      const e = error as { message?: string; code?: string };
      void this.deps.connectorLog(
        connectorId,
        'error',
        `Message not delivered after ${attempts} attempt(s): ${safeErrorMessage(error)}`,
        {
          code: e.code ?? 'DELIVERY_FAILED',
          messageId: item.id,
          origin: item.origin,
          failuresInRow: lane.failuresInRow,
        },
      );
    }
  }

  private dropped(connectorId: string, lane: Lane, item: QueuedMessage, reason = 'queue full'): void {
    this.count(connectorId, 'dropped');
    lane.unloggedDrops += 1;
    if (lane.dropTimer) return;
    const flush = () => {
      const count = lane.unloggedDrops;
      lane.unloggedDrops = 0;
      if (count === 0) {
        lane.dropTimer = undefined;
        return;
      }
      const options = deliveryOptions(this.cache.get(connectorId)?.connector?.config ?? {});
      void this.deps.connectorLog(
        connectorId,
        'warn',
        `Dropped ${count} message(s): ${reason} (queue size ${options.queueSize}, overflow ${options.overflow})`,
        {
          dropped: count,
          reason,
          overflow: options.overflow,
          queueSize: options.queueSize,
          origin: item.origin,
        },
      );
      lane.dropTimer = setTimeout(flush, DROP_LOG_EVERY_MS);
      lane.dropTimer.unref();
    };
    flush();
  }

  private async load(connectorId: string): Promise<Connector | null> {
    const cached = this.cache.get(connectorId);
    if (cached && Date.now() - cached.at < CACHE_MS) return cached.connector;
    const connector = await this.deps.orm.em
      .fork()
      .findOne(Connector, { id: connectorId }, { populate: ['account'] });
    // New settings take effect with a new client.
    if (
      cached?.connector &&
      connector &&
      cached.connector.updatedAt.getTime() !== connector.updatedAt.getTime()
    ) {
      await this.release(connectorId);
    }
    this.cache.set(connectorId, { connector, at: Date.now() });
    return connector;
  }

  private async release(connectorId: string): Promise<void> {
    for (const kind of this.deps.kinds.values())
      await kind.sender?.release(connectorId).catch(() => undefined);
  }

  private async sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }
}
