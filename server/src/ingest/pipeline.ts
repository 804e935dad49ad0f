import pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import type { Lifecycle } from '../platform/lifecycle.js';
import { pgPoolUsage, trackPool } from '../platform/db/pool-metrics.js';
import type { Metrics } from '../platform/metrics.js';
import { commitBatch, CURSOR_KEY, FencedError, type BatchCommitHook } from './commit-batch.stage.js';
import { commitSplitting, type SplitCommit } from './commit-split.js';
import { ConnectorNotices, type ConnectorNotice } from './connector-notices.js';
import type { DriverParsing } from './driver-parsing.js';
import { FrameCounters } from './frame-counter.js';
import { PacketFeed } from './packet-feed.js';
import type { StoredListener } from './packet-store.js';
import { parsePackets, type PacketOutcome, type StateUpdate } from './parse-packet.stage.js';
import { DeviceResolver } from './resolve-device.stage.js';
import type { VisibleListener, VisibleUpdate } from './visible.stage.js';

/**
 * The ingest pipeline: packets become device states. Stages, in order (ADR 0090, 0092, 0104):
 *
 *   feed        packet-feed.ts            committed packets, in memory or re-read from `packets`
 *   resolve     resolve-device.stage.ts   (connectorId, device_id) → device and driver, cached
 *   parse       parse-packet.stage.ts     driver parser → `_raw`, `_parsed`, one state per key, `_meta.*`
 *   check       frame-counter.ts          LoRaWAN frame-counter repeats and resets → packet warnings
 *   commit      commit-batch.stage.ts     one transaction: states, lastSeen, non-parsed packet status,
 *                                         the commit hook (state engine: twin states, points), cursor;
 *                                         retried and split around refused data by commit-split.ts
 *   report      connector-notices.ts      failed counters and rate-limited connector log entries
 *   publish     processed listeners (routing, rules, health evaluation); visible listeners for the
 *               packets the live view on the main thread did not show on arrival (`shownOnArrival`)
 *
 * Failure and loss behaviour:
 * - Visible before the states commit: consoles saw most packets' values on arrival (the main
 *   thread's visible stage, ADR 0104). XAPI state reads show committed states (device_states), a
 *   commit interval behind the live push.
 * - Nothing here can lose an acknowledged packet: it is in `packets` before it reaches the feed,
 *   and a batch counts as processed only when its transaction (which also advances the cursor)
 *   commits. A crash anywhere replays from the cursor at the next start; replayed packets are
 *   pushed live again after their commit (consoles may see a value twice, never a stale one persisted).
 * - A packet's status is written only when it is not `parsed` (`unknown-device`, `parse-error`,
 *   `failed`); a packet with status null at or below the cursor is parsed (no second write per packet).
 * - The database unavailable (resolve or commit): the batch is retried with backoff, in order,
 *   until it succeeds or the pipeline stops; new packets wait in the bounded feed meanwhile.
 * - The database refusing a batch's data: the batch is split until the offending packet is alone;
 *   that packet is marked `failed` with the error and the rest commit normally.
 * - Unknown device, parse error: the packet is marked (`unknown-device`, `parse-error`), the
 *   connector's failed counter grows and its log gets a rate-limited entry.
 * - A listener that throws is logged and ignored: states are already committed. The commit hook's
 *   after-commit calls (state change listeners) run after the processed listeners, same rule.
 * - Batches commit one at a time, so a device's stored states only move forward in packet order.
 * - Batches commit at most every `commitIntervalMs` while less than a batch waits: device_states
 *   may lag the live push by that much (and by the batch), never the acknowledgement.
 */

export type ProcessedListener = (updates: StateUpdate[]) => void;

/** Where packets come from: a packet store (in the ingest worker, fed from the spool, ADR 0103). */
export interface PacketSource {
  onStored(listener: StoredListener): void;
}

/** Where connector counters and log entries go (the connectors domain's ConnectorTelemetry). */
export interface ConnectorReporting {
  record(connectorId: string, result: 'in' | 'failed', count?: number): void;
  write(
    connectorId: string,
    level: 'warn',
    message: string,
    details?: Record<string, unknown>,
  ): Promise<void>;
}

export interface PipelineOptions {
  databaseUrl: string;
  packets: PacketSource;
  /** The drivers domain's parsers (services.ts passes its DriverParsing service). */
  parsing: DriverParsing;
  connectors: ConnectorReporting;
  metrics: Metrics;
  log: FastifyBaseLogger;
  batchSize?: number;
  /** The most packets one batch takes while the pipeline is behind (see FeedOptions.maxBatchSize). */
  maxBatchSize?: number;
  /**
   * Least time between two batch commits while the feed holds less than a batch: states are
   * already visible live, so persisting them in fewer, larger transactions costs nothing visible
   * and leaves the database's CPU and WAL to the packet store (PUBACK latency).
   */
  commitIntervalMs?: number;
  /** Runs inside each batch transaction before the cursor moves (the state engine, ADR 0100). */
  commitHook?: BatchCommitHook;
  /**
   * Whether consoles already saw this packet's updates on arrival (the main thread's visible stage,
   * ADR 0104); the others are pushed after their commit. Default: none was shown.
   */
  shownOnArrival?: (outcome: PacketOutcome) => boolean;
  /**
   * Stored packets the in-memory feed holds before it falls back to re-reading the table (default
   * 50,000). The ingest worker passes the spool's limit of packets not yet in the table, so a backlog
   * the spool accepted never overflows the feed (an overflow re-reads and pushes packets live twice).
   */
  feedMaxPackets?: number;
  /**
   * Cluster mode (ADR 0130): this node processes the packets of every node, read from the table every
   * `pollMs`, and each commit is fenced: a batch another processor already passed is never committed,
   * and `onFenced` hears of it (the worker then exits and contends for the processing lease again).
   */
  cluster?: { pollMs: number; onFenced: () => void };
}

const BACKOFF_MS = [50, 100, 250, 500, 1000, 2000, 5000];

class Stopped extends Error {}

/** A batch resolved, parsed and checked, ready to commit. */
interface PreparedBatch {
  outcomes: PacketOutcome[];
  /** Milliseconds its preparation took (not counting a wait for the batch before it to commit). */
  preparedMs: number;
}

export class IngestPipeline implements Lifecycle {
  readonly name = 'ingest-pipeline';
  private readonly pool: pg.Pool;
  private readonly feed: PacketFeed;
  private readonly resolver: DeviceResolver;
  private readonly frameCounters: FrameCounters;
  private readonly notices = new ConnectorNotices();
  private readonly listeners: ProcessedListener[] = [];
  private readonly visibleListeners: VisibleListener[] = [];
  private readonly shownOnArrival: (outcome: PacketOutcome) => boolean;
  private readonly parsing: DriverParsing;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly log: FastifyBaseLogger;
  private readonly processed;
  private readonly latency;
  private readonly batchSeconds;
  private readonly connectors: ConnectorReporting;
  private readonly batchSize: number;
  private readonly commitIntervalMs: number;
  private readonly cluster: PipelineOptions['cluster'];
  private lastBatchAt = 0;
  private wakeSleeper: (() => void) | undefined;
  private readonly committer: SplitCommit;

  constructor(options: PipelineOptions) {
    this.log = options.log;
    this.connectors = options.connectors;
    this.parsing = options.parsing;
    this.pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: 2,
      application_name: 'stellwerk-ingest',
    });
    // An idle connection dropped by the server (restart, failover) must not crash the process.
    this.pool.on('error', () => undefined);
    trackPool(options.metrics, 'ingest-pipeline', pgPoolUsage(this.pool));
    const batchSize = (this.batchSize = options.batchSize ?? 1000);
    this.commitIntervalMs = options.commitIntervalMs ?? 100;
    this.shownOnArrival = options.shownOnArrival ?? (() => false);
    this.cluster = options.cluster;
    const commitHook = options.commitHook;
    this.committer = {
      commit: (outcomes) =>
        commitBatch(
          this.pool,
          outcomes,
          outcomes.at(-1)!.packet.id,
          commitHook,
          options.cluster !== undefined,
        ),
      pause: (attempt) => this.pause(attempt),
      checkStopped: () => {
        if (this.stopped) throw new Stopped();
      },
      log: this.log,
    };
    this.feed = new PacketFeed(this.pool, {
      batchSize,
      maxBatchSize: options.maxBatchSize ?? 10 * batchSize,
      maxQueued: options.feedMaxPackets ?? 50_000,
      maxQueuedBytes: 64 * 1024 * 1024,
      ...(options.cluster ? { pollMs: options.cluster.pollMs } : {}),
    });
    this.resolver = new DeviceResolver(this.pool);
    this.frameCounters = new FrameCounters(this.pool);
    // Registered now, before any front door starts: the feed buffers until `start` replays.
    options.packets.onStored((packets) => this.feed.push(packets));

    const m = options.metrics;
    this.processed = m.counter('stellwerk_ingest_packets_total', 'Packets processed by the ingest pipeline', [
      'status',
    ]);
    this.latency = m.histogram(
      'stellwerk_ingest_latency_seconds',
      'From packet receipt to committed device states',
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    );
    this.batchSeconds = m.histogram(
      'stellwerk_ingest_batch_seconds',
      'Time to resolve, parse and commit one batch',
      [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    );
    m.gauge(
      'stellwerk_ingest_queue_length',
      'Committed packets waiting in memory for the pipeline',
      [],
      (g) => g.set(this.feed.queued),
    );
    m.gauge(
      'stellwerk_ingest_feed_overflows',
      'Times the pipeline fell back to reading the packet table',
      [],
      (g) => g.set(this.feed.overflowCount),
    );
    m.gauge('stellwerk_ingest_device_cache_size', 'Devices in the ingest lookup cache', [], (g) =>
      g.set(this.resolver.size),
    );
  }

  /** Called after each committed batch with its state updates, in packet order. */
  onProcessed(listener: ProcessedListener): void {
    this.listeners.push(listener);
  }

  /** Called after each committed batch with the updates consoles did not see on arrival. */
  onVisible(listener: VisibleListener): void {
    this.visibleListeners.push(listener);
  }

  /** See DeviceResolver.invalidateDevice: devices domain calls it on create, update and delete. */
  invalidateDevice(device?: { id?: string; connectorId?: string | null; deviceKey?: string }): void {
    this.resolver.invalidateDevice(device);
  }

  invalidateDriver(driverId: string): void {
    this.resolver.invalidateDriver(driverId);
  }

  invalidateConnector(connectorId: string): void {
    this.resolver.invalidateConnector(connectorId);
  }

  /** Replays packets above the stored cursor, then follows new ones. */
  async start(): Promise<void> {
    if (this.running) return;
    // The fence locks the cursor row (commit-batch.stage.ts): it has to exist before the first batch.
    if (this.cluster)
      await this.pool.query(
        `INSERT INTO system_settings (key, value, updated_at) VALUES ($1, to_jsonb('0'::text), now())
         ON CONFLICT (key) DO NOTHING`,
        [CURSOR_KEY],
      );
    const { rows } = await this.pool.query<{ cursor: string | null }>(
      `SELECT value #>> '{}' AS cursor FROM system_settings WHERE key = $1`,
      [CURSOR_KEY],
    );
    this.feed.startAt(BigInt(rows[0]?.cursor ?? '0'));
    this.running = this.run();
  }

  /** Finishes the batch in hand; what is left stays unprocessed in `packets` for the next start. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.wakeSleeper?.();
    this.feed.close();
    await this.running;
    await this.pool.end();
  }

  private async run(): Promise<void> {
    let ahead: Promise<PreparedBatch | undefined> | undefined;
    while (!this.stopped) {
      try {
        const prepared = await (ahead ?? this.prepareNext());
        ahead = undefined;
        if (!prepared) continue;
        // A backlog: the next batch is resolved and parsed while this one commits, so the worker's
        // JavaScript and PostgreSQL work at the same time. Only when the next batch is full anyway:
        // taken earlier, a smaller batch would write each device's and twin's rows more often.
        if (this.feed.fullBatchWaiting) {
          ahead = this.prepareNext();
          // Settled below, or dropped when this commit fails or the pipeline stops meanwhile.
          ahead.catch(() => undefined);
        }
        await this.commit(prepared);
      } catch (error) {
        if (error instanceof Stopped) return;
        if (error instanceof FencedError) {
          this.log.warn({ err: error }, 'ingest pipeline: another node processes packets; stopping');
          this.stopped = true;
          return this.cluster?.onFenced();
        }
        // Not expected (each step retries or splits); keep the loop alive rather than stall ingest.
        this.log.error({ err: error }, 'ingest pipeline: batch failed');
      }
    }
  }

  /** Takes the next batch (after the commit interval, unless enough is waiting) and parses it. */
  private async prepareNext(): Promise<PreparedBatch | undefined> {
    const wait = this.lastBatchAt + this.commitIntervalMs - performance.now();
    if (wait > 0 && !this.feed.catchingUp && this.feed.queued < this.batchSize) await this.sleep(wait);
    const batch = await this.retrying('read packets', () => this.feed.next());
    this.lastBatchAt = performance.now();
    if (batch.length === 0) return undefined;
    const began = performance.now();
    const resolved = await this.retrying('resolve devices', () => this.resolver.resolve(batch));
    const outcomes = await parsePackets(resolved, this.parsing, (fields) =>
      this.log.debug(fields, 'driver script console output'),
    );
    // In batch order: the next batch is prepared only after this check (frame counters are remembered).
    await this.retrying('check frame counters', () => this.frameCounters.check(outcomes));
    return { outcomes, preparedMs: performance.now() - began };
  }

  private async commit({ outcomes, preparedMs }: PreparedBatch): Promise<void> {
    const began = performance.now();
    const afterCommit: Array<() => void> = [];
    const committed = await commitSplitting(this.committer, outcomes, afterCommit);
    this.batchSeconds.observe((preparedMs + performance.now() - began) / 1000);
    const now = Date.now();
    const updates: StateUpdate[] = [];
    const unseen: StateUpdate[] = [];
    for (const o of committed) {
      this.processed.inc({ status: o.status });
      if (o.status !== 'parsed' && o.status !== 'device-inactive')
        this.connectors.record(o.packet.connectorId, 'failed');
      this.latency.observe(Math.max(0, now - o.packet.receivedAt.getTime()) / 1000);
      for (const u of o.updates) updates.push(u);
      // A packet the split marked `failed` has no updates left; anything else not yet shown is now.
      if (!this.shownOnArrival(o)) for (const u of o.updates) unseen.push(u);
    }
    this.report(this.notices.collect(committed));
    if (unseen.length > 0) this.notifyVisible(unseen);
    callEach(
      this.listeners.map((listener) => () => listener(updates)),
      this.log,
      'a listener',
    );
    callEach(afterCommit, this.log, 'an after-commit call');
  }

  private notifyVisible(updates: VisibleUpdate[]): void {
    if (updates.length === 0) return;
    callEach(
      this.visibleListeners.map((listener) => () => listener(updates)),
      this.log,
      'a visible listener',
    );
  }

  /** Connector log writes never throw and never hold up the next batch. */
  private report(notices: ConnectorNotice[]): void {
    for (const n of notices) void this.connectors.write(n.connectorId, n.level, n.message, n.details);
  }

  private async retrying<T>(what: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (error) {
        if (this.stopped) throw new Stopped();
        this.log.warn({ err: error, attempt }, `ingest pipeline: ${what} failed, retrying`);
        await this.pause(attempt);
      }
    }
  }

  /** Sleeps, but wakes at once when the pipeline stops. */
  private async sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeSleeper = () => (clearTimeout(timer), resolve());
    });
    this.wakeSleeper = undefined;
  }

  private async pause(attempt: number): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]));
    if (this.stopped) throw new Stopped();
  }
}

/** Calls each in turn; one that throws is logged and the rest still run (the batch is committed). */
function callEach(calls: Iterable<() => void>, log: FastifyBaseLogger, what: string): void {
  for (const call of calls) {
    try {
      call();
    } catch (error) {
      log.warn({ err: error }, `ingest pipeline: ${what} failed`);
    }
  }
}
