import fs from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { FastifyBaseLogger } from 'fastify';
import { DriverParsing } from '../../drivers/driver-parsing.service.js';
import { packetEntry } from '../../live/live.protocol.js';
import { AdvisoryLease } from '../../platform/db/advisory-lock.js';
import { trackPool } from '../../platform/db/pool-metrics.js';
import { Metrics } from '../../platform/metrics.js';
import { StateEngine } from '../../states/engine/state-engine.js';
import { TransactionalPointSink } from '../../timeseries/point-sink.js';
import { PacketStore } from '../packet-store.js';
import { parsedOnArrival } from '../../drivers/parsers/index.js';
import { IngestPipeline } from '../pipeline.js';
import type { PacketOutcome } from '../parse-packet.stage.js';
import { decodeRecords } from '../spool/spool-record.js';
import type { FromWorker, IngestWorkerSetup, LogLevel, ToWorker } from './ingest-worker.messages.js';

/**
 * The ingest worker thread (ADR 0102, 0103): everything after the packet spool on its own event loop
 * and its own database pools — the packet store's INSERTs (spooled packets into `packets`, with the
 * spool position), the ingest pipeline (feed, resolve, parse, batch commit with the state engine's
 * in-transaction work and the time-series outbox). The main thread keeps the broker, the spool, the
 * live view of arriving packets (ADR 0104), HTTP and the live sockets; it forwards spooled records and
 * gets back the committed spool position, encoded live entries of the packets it did not show on
 * arrival, state changes, connector reports, log lines and, on request, this thread's metrics. Under overload this thread runs at a lower priority (`nice`), so accepting and
 * acknowledging packets keeps the CPU and the processing catches up afterwards.
 */

const port = parentPort!;
const setup = workerData as IngestWorkerSetup;
const post = (message: FromWorker) => port.postMessage(message);

/** Log lines go to the main thread's logger (its level and destination). */
function relayLogger(): FastifyBaseLogger {
  const at =
    (level: LogLevel) =>
    (first: unknown, message?: string): void => {
      const fields = typeof first === 'object' && first !== null ? serialisable(first) : {};
      const text = typeof first === 'string' ? first : (message ?? '');
      post({ type: 'log', level, fields, message: text });
    };
  const logger: Record<string, unknown> = {
    level: setup.debug ? 'debug' : 'info',
    fatal: at('error'),
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: setup.debug ? at('debug') : () => undefined,
    trace: () => undefined,
    silent: () => undefined,
    child: () => logger,
  };
  return logger as unknown as FastifyBaseLogger;
}

/** Errors lose their own properties in a structured clone: keep what a log line shows. */
function serialisable(fields: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] =
      value instanceof Error
        ? {
            type: value.name,
            message: value.message,
            stack: value.stack,
            code: (value as { code?: unknown }).code,
          }
        : value;
  }
  return out;
}

const log = relayLogger();
const cluster = setup.cluster === true;
/** Cluster mode: how often the processing node looks for packets other nodes stored. */
const CLUSTER_POLL_MS = 20;
/** Cluster mode: how often a node asks for the processing lease (and the holder checks it still has it). */
const LEASE_ATTEMPT_MS = 1000;
/** `pg_try_advisory_lock` key of the processing lease: "STLI". */
const PROCESSING_LEASE = 0x5354_4c49;
const lease = cluster ? new AdvisoryLease(setup.databaseUrl, PROCESSING_LEASE) : undefined;
let leaseTimer: NodeJS.Timeout | undefined;
const metrics = new Metrics(setup.metricsLabels, { processMetrics: false });
const { databaseUrl } = setup;
const packets = new PacketStore(databaseUrl, setup.spoolPositionKey, metrics, log, cluster);
packets.onCommittedSeq((seq) => post({ type: 'committed', seq }));
// Without metrics: the main thread's engine counts the changes this one reports.
const engine = new StateEngine({ databaseUrl, points: new TransactionalPointSink(setup.points), log });
trackPool(metrics, 'ingest-state-engine', () => engine.poolUsage());
engine.onStateChanges((changes) => post({ type: 'state-changes', changes }));
/**
 * The main thread's visible stage showed every packet that arrived while this store ran, unless it
 * declined it (overloaded) or its parser runs user code (ADR 0104); replayed packets and those are
 * pushed after their commit.
 */
function shownOnArrival({ packet, device }: PacketOutcome): boolean {
  // Cluster mode: the packet may have arrived at any node; consoles see it after its commit.
  if (cluster) return false;
  const arrivedFrom = packets.firstArrivedId;
  return (
    arrivedFrom !== undefined &&
    packet.id >= arrivedFrom &&
    !packet.notShownLive &&
    parsedOnArrival(device?.driver ?? null)
  );
}
const pipeline = new IngestPipeline({
  databaseUrl,
  packets,
  parsing: new DriverParsing(),
  connectors: {
    record: (connectorId, result, count = 1) => post({ type: 'record', connectorId, result, count }),
    write: async (connectorId, level, message, details) =>
      post({ type: 'connector-log', connectorId, level, message, ...(details ? { details } : {}) }),
  },
  metrics,
  log,
  // Twin states a packet sets directly were shown with it on arrival (ADR 0135): not pushed again.
  commitHook: (client, outcomes) => engine.inBatch(client, outcomes, shownOnArrival),
  // A deposed processor ends this thread; the main thread starts a new one, which contends again.
  ...(cluster ? { cluster: { pollMs: CLUSTER_POLL_MS, onFenced: () => process.exit(1) } } : {}),
  shownOnArrival,
  ...(setup.batchSize ? { batchSize: setup.batchSize } : {}),
  ...(setup.commitIntervalMs !== undefined ? { commitIntervalMs: setup.commitIntervalMs } : {}),
  ...(setup.maxPending ? { feedMaxPackets: Math.max(50_000, setup.maxPending) } : {}),
});
const want = { visibleUpdates: false, processed: false };
// Packets not shown on arrival, encoded here once per update: the main thread only joins entries.
pipeline.onVisible((updates) =>
  post({
    type: 'visible',
    deviceIds: updates.map((u) => u.deviceId),
    entries: updates.map(packetEntry),
    ...(want.visibleUpdates ? { updates } : {}),
  }),
);
pipeline.onProcessed((updates) => {
  if (want.processed) post({ type: 'processed', updates });
});

/** Linux: a thread has its own nice value; `/proc/thread-self` names this thread's id. */
function lowerPriority(nice: number): void {
  if (nice <= 0) return;
  try {
    const threadId = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    os.setPriority(threadId, nice);
  } catch (error) {
    log.info({ err: error }, 'ingest worker: could not lower its priority; it runs at the normal one');
  }
}

async function start(): Promise<void> {
  try {
    lowerPriority(setup.nice ?? 0);
    await packets.start();
    const committedSeq = await packets.spoolPosition();
    if (lease) {
      // Storing starts at once; processing waits for the lease.
      post({ type: 'started', committedSeq });
      return void contendForProcessing();
    }
    await engine.start();
    await pipeline.start();
    post({ type: 'started', committedSeq });
  } catch (error) {
    post({ type: 'start-failed', message: error instanceof Error ? error.message : String(error) });
  }
}

/**
 * Cluster mode: asks for the processing lease until it holds it, then processes; a holder that finds
 * the lease gone ends this thread (its next commit would be fenced anyway).
 */
function contendForProcessing(): void {
  let processing = false;
  const attempt = async () => {
    try {
      const held = await lease!.acquire();
      if (processing && !held) {
        log.warn({}, 'ingest worker: lost the processing lease; restarting');
        return process.exit(1);
      }
      if (held && !processing) {
        processing = true;
        log.info({}, 'ingest worker: this node processes the packets of every node');
        await engine.start();
        await pipeline.start();
      }
    } catch (error) {
      if (processing) return process.exit(1);
      log.warn({ err: error }, 'ingest worker: could not ask for the processing lease; trying again');
    }
  };
  leaseTimer = setInterval(() => void attempt(), LEASE_ATTEMPT_MS);
  void attempt();
}

async function stop(): Promise<void> {
  if (leaseTimer) clearInterval(leaseTimer);
  await packets.stop();
  await pipeline.stop();
  await engine.stop();
  // Ending its session frees the lease at once: another node takes over within LEASE_ATTEMPT_MS.
  await lease?.release();
  post({ type: 'stopped' });
}

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'spooled':
      for (const bytes of message.groups) {
        const { records } = decodeRecords(bytes);
        if (message.replayed) packets.appendSpooled(records.map((r) => ({ ...r, replayed: true })));
        else if (!message.declinedSeqs) packets.appendSpooled(records);
        else {
          const declined = new Set(message.declinedSeqs);
          packets.appendSpooled(records.map((r) => (declined.has(r.seq) ? { ...r, notShownLive: true } : r)));
        }
      }
      return;
    case 'invalidate-device':
      return pipeline.invalidateDevice(message.device);
    case 'invalidate-driver':
      return pipeline.invalidateDriver(message.driverId);
    case 'invalidate-connector':
      return pipeline.invalidateConnector(message.connectorId);
    case 'definitions-changed':
      return engine.definitionsChanged();
    case 'want':
      want.visibleUpdates = message.visibleUpdates;
      want.processed = message.processed;
      return;
    case 'metrics':
      return void metrics
        .families()
        .then((families) => post({ type: 'metrics', requestId: message.requestId, families }));
    case 'start':
      return void start();
    case 'stop':
      return void stop();
  }
});
