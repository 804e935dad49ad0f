import type { Worker } from 'node:worker_threads';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import { packetEntry } from '../../live/live.protocol.js';
import { EventLoopLoad } from '../../platform/event-loop-load.js';
import type { Lifecycle } from '../../platform/lifecycle.js';
import { pgPoolUsage, trackPool } from '../../platform/db/pool-metrics.js';
import type { MetricFamily, Metrics } from '../../platform/metrics.js';
import { startWorkerThread } from '../../platform/worker-thread.js';
import type { StateEngine } from '../../states/engine/state-engine.js';
import { spoolPositionKey } from '../packet-store.js';
import type { PointRouting } from '../../timeseries/point-sink.js';
import type { DriverParsing } from '../driver-parsing.js';
import type { ConnectorReporting, ProcessedListener } from '../pipeline.js';
import { DEFAULT_DEVICE_CACHE, DeviceResolver } from '../resolve-device.stage.js';
import type { PacketSpool, SpoolGroup } from '../spool/packet-spool.js';
import { VisibleStage, type VisibleListener, type VisibleUpdate } from '../visible.stage.js';
import type { TwinStatesOnArrival } from '../../live/twin-states-on-arrival.js';
import type { FromWorker, IngestWorkerSetup, ToWorker } from './ingest-worker.messages.js';

/**
 * The ingest path seen from the main thread (ADR 0102, 0103, 0104): the live view of arriving packets
 * here, the packet store and the ingest pipeline in a worker thread. The same surface as
 * IngestPipeline (start, stop, onVisible, onProcessed, invalidate*), so the rest of the server does
 * not know which thread shows, stores, parses and commits.
 *
 * The main thread keeps the broker, the packet spool (PUBACK once a packet is on disk), the visible
 * stage (every accepted packet of a followed device is parsed and pushed live at once, visible.stage.ts)
 * and the live sockets. It hands every durable spool group to the worker (the group's bytes,
 * transferred), and hears back the spool position committed to `packets` (so the spool can drop what
 * the table holds), encoded live entries of the packets the visible stage did not show, the state
 * changes the worker's engine committed (given to the main StateEngine's listeners), connector
 * counters and log entries, and log lines.
 *
 * Failure behaviour:
 * - Durability does not depend on the worker: a packet is acknowledged once the spool has it on disk;
 *   the spool keeps it until the worker reports it committed to `packets`.
 * - The worker starts (or restarts after exiting unexpectedly, a second later): it reports the spool
 *   position in `packets`, and gets every spooled record above it, read from the spool files, before
 *   any new group. Its pipeline replays from its cursor (ADR 0090).
 * - Before the worker has started nothing is forwarded: its start reads what it lacks from the spool.
 * - Invalidations and definition changes are messages on the same port as the packets, so they apply
 *   before any packet sent after them; the visible stage's own device cache forgets at the same time.
 */

export interface IngestWorkerOptions {
  databaseUrl: string;
  spool: PacketSpool;
  connectors: ConnectorReporting;
  /** The main engine: its listeners get the worker's state changes, its definition changes go there. */
  stateEngine: StateEngine;
  /** The drivers domain's parsers, for the visible stage (the worker has its own). */
  parsing: DriverParsing;
  /** Whether a live console follows a device: the visible stage shows only such devices' packets. */
  followed: (deviceId: string) => boolean;
  /** Twin states shown on arrival (ADR 0135): the visible stage also parses devices that set them. */
  twinStates?: TwinStatesOnArrival;
  metrics: Metrics;
  metricsLabels: Record<string, string>;
  /** Where the worker's state engine stores points (the configured time-series targets). */
  points: PointRouting;
  log: FastifyBaseLogger;
  batchSize?: number;
  commitIntervalMs?: number;
  /** STELLWERK_INGEST_MAX_PENDING: the worker's feed holds as many packets before re-reading the table. */
  maxPending?: number;
  /** Nice value of the worker thread under Linux (STELLWERK_INGEST_WORKER_NICE); 0 leaves it. */
  nice?: number;
  /**
   * Cluster mode (ADR 0130): the worker serialises its inserts across nodes and processes only while
   * it holds the processing lease; arriving packets are not shown on arrival (the processing node
   * shows every packet after its commit, and the cluster bus carries it to every node's consoles).
   */
  cluster?: boolean;
}

export type VisibleEntriesListener = (deviceIds: string[], entries: string[]) => void;

const RESTART_DELAY_MS = 1000;
/** Spooled packets not yet in `packets` beyond which the visible stage declines arriving packets. */
const LIVE_VIEW_MAX_BACKLOG = 5000;
// The worker's young generation sized as the main thread's (node-flags.ts: 64 MiB semi-spaces; V8's
// young generation is three of them): it allocates per packet too. At 10,000 msg/s, while the worker
// still showed packets live (before ADR 0104), visible p99 measured 76–80 ms with it against 97–102 ms
// with V8's default (two alternating runs each).
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 192 };
const METRICS_TIMEOUT_MS = 2000;

export class IngestWorker implements Lifecycle {
  readonly name = 'ingest-pipeline';
  private worker: Worker | undefined;
  private running = false;
  private stopping: Promise<void> | undefined;
  /** The highest spool seq sent to the current worker; undefined until it has started. */
  private forwardedThrough: number | undefined;
  private readonly visibleListeners: VisibleListener[] = [];
  private readonly entryListeners: VisibleEntriesListener[] = [];
  private readonly processedListeners: ProcessedListener[] = [];
  private readonly metricsWaiting = new Map<number, (families: MetricFamily[]) => void>();
  private nextRequest = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly visiblePool: pg.Pool;
  private readonly mainThreadLoad = new EventLoopLoad();
  private readonly visibleResolver: DeviceResolver;

  constructor(private readonly options: IngestWorkerOptions) {
    // One connection: the visible stage looks up only devices missing from its cache.
    this.visiblePool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: 1,
      application_name: 'stellwerk-live-visible',
    });
    this.visiblePool.on('error', () => undefined);
    trackPool(options.metrics, 'ingest-visible', pgPoolUsage(this.visiblePool));
    // Serving stale entries: a lookup here would hold up every later packet on the broker's thread.
    this.visibleResolver = new DeviceResolver(this.visiblePool, {
      ...DEFAULT_DEVICE_CACHE,
      serveStale: true,
    });
    const twinStates = options.cluster ? undefined : options.twinStates;
    const visible = new VisibleStage({
      resolver: this.visibleResolver,
      parsing: options.parsing,
      wanted: (device) =>
        !options.cluster && (this.showsPackets(device.id) || twinStates?.wants(device) === true),
      publish: (outcomes) => {
        const updates: VisibleUpdate[] = [];
        for (const o of outcomes) if (o.device && this.showsPackets(o.device.id)) updates.push(...o.updates);
        if (updates.length > 0) this.publishVisible(updates);
        twinStates?.show(outcomes);
      },
      ...(twinStates ? { prepare: () => twinStates.prepare() } : {}),
      // This thread saturated, or the worker far behind: the broker's thread keeps its CPU for
      // accepting packets, and the worker shows them after their commit (ADR 0104).
      overloaded: () =>
        this.mainThreadLoad.busy
          ? 'event-loop'
          : options.spool.backlog > LIVE_VIEW_MAX_BACKLOG
            ? 'backlog'
            : null,
      metrics: options.metrics,
      log: options.log,
    });
    options.spool.onAccepted((packet) => visible.take(packet));
    options.spool.onDurable((group) => this.forward(group));
    options.stateEngine.onDefinitionsChanged(() => this.send({ type: 'definitions-changed' }));
    options.metrics.addSource(() => this.workerMetrics());
  }

  /**
   * Looks up devices a console starts following, so their first packets are shown without a lookup
   * on the broker's thread. Failure only costs that lookup later.
   */
  preloadVisible(deviceIds: string[]): void {
    this.visibleResolver
      .preload(deviceIds)
      .catch((error: unknown) =>
        this.options.log.warn({ err: error }, 'live view: preloading devices failed'),
      );
  }

  /** Encoded live entries of visible updates (the live hub): no object crosses the thread boundary. */
  onVisibleEntries(listener: VisibleEntriesListener): void {
    this.entryListeners.push(listener);
  }

  /** Whole visible updates (tests, tools): costs a structured copy per batch, so only when asked for. */
  onVisible(listener: VisibleListener): void {
    this.visibleListeners.push(listener);
    this.sendWants();
  }

  onProcessed(listener: ProcessedListener): void {
    this.processedListeners.push(listener);
    this.sendWants();
  }

  invalidateDevice(device?: { id?: string; connectorId?: string | null; deviceKey?: string }): void {
    this.visibleResolver.invalidateDevice(device);
    this.send({ type: 'invalidate-device', ...(device ? { device } : {}) });
  }

  invalidateDriver(driverId: string): void {
    this.visibleResolver.invalidateDriver(driverId);
    this.send({ type: 'invalidate-driver', driverId });
  }

  invalidateConnector(connectorId: string): void {
    this.visibleResolver.invalidateConnector(connectorId);
    this.send({ type: 'invalidate-connector', connectorId });
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.mainThreadLoad.start();
    try {
      await this.spawn();
    } catch (error) {
      this.running = false;
      throw error;
    }
  }

  /** The worker finishes its batch in hand; what is left stays in `packets` for the next start. */
  async stop(): Promise<void> {
    if (!this.running) return this.stopping;
    this.running = false;
    clearTimeout(this.restartTimer);
    this.mainThreadLoad.stop();
    const worker = this.worker;
    this.worker = undefined;
    this.forwardedThrough = undefined;
    this.stopping = new Promise<void>((resolve) => {
      if (!worker) return resolve();
      const done = () => void worker.terminate().finally(resolve);
      worker.once('exit', () => resolve());
      worker.on('message', (m: FromWorker) => m.type === 'stopped' && done());
      worker.postMessage({ type: 'stop' } satisfies ToWorker);
    }).then(() => {
      // Cluster mode: what the worker did not commit will never be acknowledged by this node.
      this.options.spool.refuseUncommitted();
      return this.visiblePool.end();
    });
    return this.stopping;
  }

  private spawn(): Promise<void> {
    const { options } = this;
    const setup: IngestWorkerSetup = {
      databaseUrl: options.databaseUrl,
      // Where the worker records the spool position; the spool has started (lifecycle order).
      spoolPositionKey: spoolPositionKey(options.spool.id),
      metricsLabels: options.metricsLabels,
      points: options.points,
      ...(options.batchSize ? { batchSize: options.batchSize } : {}),
      ...(options.commitIntervalMs !== undefined ? { commitIntervalMs: options.commitIntervalMs } : {}),
      ...(options.nice ? { nice: options.nice } : {}),
      ...(options.maxPending ? { maxPending: options.maxPending } : {}),
      ...(options.log.level === 'debug' || options.log.level === 'trace' ? { debug: true } : {}),
      ...(options.cluster ? { cluster: true } : {}),
    };
    const worker = createWorker(setup);
    this.worker = worker;
    this.forwardedThrough = undefined;
    return new Promise<void>((resolve, reject) => {
      let started = false;
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'started') {
          started = true;
          this.catchUp(message.committedSeq);
          return resolve();
        }
        if (message.type === 'start-failed') {
          this.worker = undefined;
          void worker.terminate();
          return reject(new Error(`ingest worker: ${message.message}`));
        }
        this.received(message);
      });
      worker.on('error', (error: unknown) => {
        options.log.error({ err: error }, 'ingest worker failed');
        if (!started) reject(error instanceof Error ? error : new Error(String(error)));
      });
      worker.on('exit', (code) => {
        if (this.worker !== worker) return;
        this.worker = undefined;
        this.forwardedThrough = undefined;
        if (!started || !this.running) return;
        options.log.error({ code }, 'ingest worker exited; restarting it');
        this.restartTimer = setTimeout(() => {
          if (this.running && !this.worker)
            this.spawn().catch((error: unknown) =>
              options.log.error({ err: error }, 'ingest worker restart failed'),
            );
        }, RESTART_DELAY_MS);
      });
      this.sendWants();
      worker.postMessage({ type: 'start' } satisfies ToWorker);
    });
  }

  private received(message: FromWorker): void {
    const { options } = this;
    switch (message.type) {
      case 'committed':
        return options.spool.committed(message.seq);
      case 'visible':
        for (const listener of this.entryListeners)
          this.safely(() => listener(message.deviceIds, message.entries));
        if (message.updates)
          for (const listener of this.visibleListeners) this.safely(() => listener(message.updates!));
        return;
      case 'processed':
        for (const listener of this.processedListeners) this.safely(() => listener(message.updates));
        return;
      case 'state-changes':
        return options.stateEngine.publishChanges(message.changes);
      case 'record':
        return options.connectors.record(message.connectorId, message.result, message.count);
      case 'connector-log':
        return void options.connectors
          .write(message.connectorId, message.level, message.message, message.details)
          .catch(() => undefined);
      case 'log':
        return options.log[message.level](message.fields, message.message);
      case 'metrics':
        this.metricsWaiting.get(message.requestId)?.(message.families);
        return;
    }
  }

  /** Whether a device's packets go to the live consoles (or to whole-update listeners). */
  private showsPackets(deviceId: string): boolean {
    return this.visibleListeners.length > 0 || this.options.followed(deviceId);
  }

  /** Updates the visible stage parsed on arrival: encoded once, as the worker's entries are. */
  private publishVisible(updates: VisibleUpdate[]): void {
    if (this.entryListeners.length > 0) {
      const deviceIds = updates.map((u) => u.deviceId);
      const entries = updates.map(packetEntry);
      for (const listener of this.entryListeners) this.safely(() => listener(deviceIds, entries));
    }
    for (const listener of this.visibleListeners) this.safely(() => listener(updates));
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.options.log.warn({ err: error }, 'ingest pipeline: a listener failed');
    }
  }

  /** The new worker gets every spooled record it lacks, read from the spool files, then new groups. */
  private catchUp(committedSeq: number): void {
    const { spool } = this.options;
    spool.committed(committedSeq);
    const groups = spool.readDurable(committedSeq);
    for (const group of groups) this.post(group, true);
    this.forwardedThrough = Math.max(committedSeq, spool.lastDurableSeq);
  }

  private forward(group: SpoolGroup): void {
    if (this.forwardedThrough === undefined || group.lastSeq <= this.forwardedThrough) return;
    this.forwardedThrough = group.lastSeq;
    this.post(group, false);
  }

  private post(group: SpoolGroup, replayed: boolean): void {
    const message: ToWorker = {
      type: 'spooled',
      groups: [group.bytes],
      replayed,
      ...(group.declinedSeqs ? { declinedSeqs: group.declinedSeqs } : {}),
    };
    this.worker?.postMessage(message, [group.bytes.buffer as ArrayBuffer]);
  }

  private sendWants(): void {
    this.send({
      type: 'want',
      visibleUpdates: this.visibleListeners.length > 0,
      processed: this.processedListeners.length > 0,
    });
  }

  private send(message: ToWorker): void {
    this.worker?.postMessage(message);
  }

  private workerMetrics(): Promise<MetricFamily[]> {
    const worker = this.worker;
    if (!worker) return Promise.resolve([]);
    const requestId = this.nextRequest++;
    return new Promise<MetricFamily[]>((resolve) => {
      const timer = setTimeout(() => finish([]), METRICS_TIMEOUT_MS);
      const finish = (families: MetricFamily[]) => {
        clearTimeout(timer);
        this.metricsWaiting.delete(requestId);
        resolve(families);
      };
      this.metricsWaiting.set(requestId, finish);
      worker.postMessage({ type: 'metrics', requestId } satisfies ToWorker);
    });
  }
}

/** The thread file beside this one (platform/worker-thread.ts registers tsx when run from sources). */
function createWorker(setup: IngestWorkerSetup): Worker {
  return startWorkerThread(import.meta.url, 'ingest-worker.thread', setup, WORKER_LIMITS);
}
