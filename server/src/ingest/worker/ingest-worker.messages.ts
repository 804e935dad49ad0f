import type { MetricFamily } from '../../platform/metrics.js';
import type { PointRouting } from '../../timeseries/point-sink.js';
import type { StateChange } from '../../states/engine/state-work.js';
import type { StateUpdate } from '../parse-packet.stage.js';
import type { VisibleUpdate } from '../visible.stage.js';

/**
 * Messages between the main thread (ingest-worker.ts) and the ingest worker thread
 * (ingest-worker.thread.ts), ADR 0102. One port, so messages arrive in the order they were sent:
 * an invalidation or a definitions change sent before a packet is applied before that packet.
 */

export interface IngestWorkerSetup {
  databaseUrl: string;
  /** `system_settings` key of this node's spool position (packet-store.ts `spoolPositionKey` of the spool's id). */
  spoolPositionKey: string;
  /** Default labels of the worker's metrics registry (the main registry's: `node`). */
  metricsLabels: Record<string, string>;
  /** Where the state engine's points go (the configured time-series targets). */
  points: PointRouting;
  batchSize?: number;
  commitIntervalMs?: number;
  /** The spool's limit of packets not yet in the table (STELLWERK_INGEST_MAX_PENDING): the feed holds as many. */
  maxPending?: number;
  /** Nice value of the worker thread (Linux; 0: unchanged). */
  nice?: number;
  /** Debug lines (driver scripts' console output) are relayed only when the main logger writes them. */
  debug?: boolean;
  /**
   * Cluster mode (ADR 0130): packet inserts serialised across nodes, and the pipeline runs only while
   * this node holds the processing lease, reading every node's packets from the table.
   */
  cluster?: boolean;
}

export type ToWorker =
  | { type: 'start' }
  | { type: 'stop' }
  /**
   * Spooled records (spool-record.ts encoding), in sequence order, each group in its own buffer;
   * `replayed`: read back from the spool files when the worker started, not arriving now;
   * `declinedSeqs`: packets the live view did not show on arrival (overloaded).
   */
  | { type: 'spooled'; groups: Uint8Array[]; replayed: boolean; declinedSeqs?: number[] }
  | {
      type: 'invalidate-device';
      device?: { id?: string; connectorId?: string | null; deviceKey?: string };
    }
  | { type: 'invalidate-driver'; driverId: string }
  | { type: 'invalidate-connector'; connectorId: string }
  | { type: 'definitions-changed' }
  /** Whether the main thread has listeners for whole updates (besides the encoded live entries). */
  | { type: 'want'; visibleUpdates: boolean; processed: boolean }
  | { type: 'metrics'; requestId: number };

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

export type FromWorker =
  /** `committedSeq`: the spool position in `packets`; the main thread sends what follows it. */
  | { type: 'started'; committedSeq: number }
  /** Spooled packets up to `seq` are committed to `packets`. */
  | { type: 'committed'; seq: number }
  | { type: 'start-failed'; message: string }
  | { type: 'stopped' }
  /** Live entries (`packetEntry`) of updates not shown on arrival, `deviceIds[i]` the device of `entries[i]`. */
  | { type: 'visible'; deviceIds: string[]; entries: string[]; updates?: VisibleUpdate[] }
  | { type: 'processed'; updates: StateUpdate[] }
  | { type: 'state-changes'; changes: StateChange[] }
  | { type: 'record'; connectorId: string; result: 'in' | 'failed'; count: number }
  | {
      type: 'connector-log';
      connectorId: string;
      level: 'warn';
      message: string;
      details?: Record<string, unknown>;
    }
  | { type: 'log'; level: LogLevel; fields: Record<string, unknown>; message: string }
  | { type: 'metrics'; requestId: number; families: MetricFamily[] };
