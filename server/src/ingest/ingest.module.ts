import type { AppContext } from '../context.js';
import { LiveHub } from '../live/live.hub.js';
import { TwinStatesOnArrival } from '../live/twin-states-on-arrival.js';
import { StateEngine } from '../states/engine/state-engine.js';
import { pointRouting, TransactionalPointSink } from '../timeseries/point-sink.js';
import type { DriverParsing } from './driver-parsing.js';
import type { ConnectorReporting } from './pipeline.js';
import type { PacketSpool } from './spool/packet-spool.js';
import { IngestWorker } from './worker/ingest-worker.js';

export interface IngestDeps {
  databaseUrl: string;
  /** The packet spool every front door appends to. */
  packets: PacketSpool;
  parsing: DriverParsing;
  connectors: ConnectorReporting;
  /** Whether other nodes share this site (cluster mode, ADR 0131). */
  clustered: () => boolean;
}

/**
 * The path from a spooled packet to the consoles and the tables: the state engine, the live hub and
 * the ingest worker, wired to each other and pushed to the lifecycle in their start order (the
 * engine before the pipeline, so it is stopped after it and the last batch still reaches it).
 */
export function createIngest(ctx: AppContext, deps: IngestDeps) {
  const { databaseUrl } = deps;
  // Twin states follow device states in the ingest batch's transaction (ADR 0100), and so do their
  // points: `ts_points` rows, and outbox rows for external targets (ADR 0111).
  const points = pointRouting(ctx.config.timeseriesTargets);
  const stateEngine = new StateEngine({
    databaseUrl,
    points: new TransactionalPointSink(points),
    log: ctx.log,
    metrics: ctx.metrics,
  });
  ctx.lifecycle.push(stateEngine);
  const live = new LiveHub(ctx.em, ctx.log, ctx.metrics, ctx.clock);
  // Arriving packets of followed devices are shown live from this thread (ADR 0104); storing, resolve,
  // parse, commit and the engine's in-batch work run in a worker thread (ADR 0102, 0103).
  const ingest = new IngestWorker({
    stateEngine,
    parsing: deps.parsing,
    // In a cluster a console on another node may follow it: every device's packets go out (ADR 0131).
    followed: (deviceId) => deps.clustered() || live.followsDevice(deviceId),
    // The twin states a followed packet sets directly go out with it (ADR 0135).
    twinStates: new TwinStatesOnArrival({
      loadedRouting: () => stateEngine.loadedRouting(),
      routing: () => stateEngine.routing(),
      followsTwin: (twinId) => live.followsTwin(twinId),
      followedTwinsVersion: () => live.followedTwinsVersion(),
      publish: (changes) => live.publishArrivedStates(changes),
    }),
    databaseUrl,
    spool: deps.packets,
    nice: ctx.config.ingestWorkerNice,
    maxPending: ctx.config.ingestMaxPending,
    batchSize: ctx.config.ingestBatchSize,
    commitIntervalMs: ctx.config.ingestCommitIntervalMs,
    connectors: deps.connectors,
    metrics: ctx.metrics,
    metricsLabels: { node: ctx.config.nodeName },
    points,
    log: ctx.log,
    cluster: ctx.config.redisUrl !== undefined,
  });
  ingest.onVisibleEntries((deviceIds, entries) => live.publishEncoded(deviceIds, entries));
  live.onDevicesFollowed((deviceIds) => ingest.preloadVisible(deviceIds));
  // Device packets and the twin states they set go out on arrival, derived twin states after their
  // commit (docs/live.md).
  stateEngine.onStateChanges((changes) => live.publishStates(changes));
  ctx.lifecycle.push(ingest, live);
  return { stateEngine, live, ingest };
}
