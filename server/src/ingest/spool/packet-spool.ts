import { mkdir } from 'node:fs/promises';
import type { FastifyBaseLogger } from 'fastify';
import { StartupError } from '../../platform/db/startup-error.js';
import type { Lifecycle } from '../../platform/lifecycle.js';
import type { Metrics } from '../../platform/metrics.js';
import { PacketRefusedError, type IncomingPacket, type PacketSink } from '../ingest.types.js';
import {
  acquireLock,
  readOrCreateSpoolId,
  releaseLock,
  scanSegments,
  type SpoolGroup,
} from './spool-files.js';
import { CommitWaiters } from './commit-waiters.js';
import { spoolMetrics } from './spool-metrics.js';
import { encodedRecordSize, encodeRecordInto } from './spool-record.js';
import { SpoolSegments } from './spool-segments.js';
import {
  GATHER_BELOW_RECORDS,
  MAX_GROUP_BYTES,
  MAX_GROUP_RECORDS,
  MIN_GROUP_INTERVAL_MS,
  PendingGroup,
  SYNCED_BY_WRITE,
  type OpenSegment,
  writeFully,
} from './spool-writes.js';

export type { SpoolGroup } from './spool-files.js';

/**
 * Durable, append-only local packet spool with group commit (records: spool-record.ts).
 *
 * Failure behaviour, in order:
 * - `append` resolves only after the packet's record is written and fdatasync'ed, so a front door
 *   that acknowledges after `append` never acknowledges a packet a crash can lose. In cluster mode
 *   (`acknowledgeAfterCommit`) it resolves only once downstream committed it to `packets`; appends a
 *   stop leaves waiting for that never resolve (the client was not acknowledged and sends again).
 * - One write + fdatasync is in flight at a time; packets arriving meanwhile form the next group (up
 *   to MAX_GROUP_RECORDS or MAX_GROUP_BYTES) and cost one fdatasync each; when idle a packet is
 *   written at once. The packets of a group share one promise.
 * - When `maxOutstanding` packets are accepted but not yet committed downstream, `append` rejects with
 *   INGEST_BUSY: the broker then does not acknowledge and the client retries; nothing is dropped.
 * - A failed write or fdatasync rejects every packet of that group with INGEST_STORE_FAILED (none was
 *   acknowledged). The segment is truncated back to its durable end before the next group, whose
 *   records take the refused seqs. If truncation fails, that segment is closed and a new one named by
 *   the refused group's first seq takes over: a restart reads no segment past the next one's first
 *   seq, so the refused records stay ignored. Refused records never reach `onDurable` or `readDurable`.
 * - `onAccepted` listeners see each accepted packet at once, before it is durable (the live view,
 *   ADR 0104): a packet they saw may still be refused if its write fails. Their failure changes nothing.
 *   A listener may decline a packet (returns false); its group then names it in `declinedSeqs`.
 * - After the fdatasync, `onDurable` listeners get the group (the ingest worker); a listener's failure
 *   never affects durability, because the worker reads what it lacks with `readDurable` when it starts.
 * - A torn tail (a crash mid-write) is ignored at start; appends always go to a new segment.
 * - Segments are deleted once downstream committed all their records (`committed`), never before.
 */

export interface PacketSpoolOptions {
  /** Created with mode 0o700 if missing. */
  dir: string;
  /** The highest seq of this spool (`spoolId`, see `PacketSpool.id`) committed downstream; 0 if none. */
  readCommittedSeq: (spoolId: string) => Promise<number>;
  /** Records accepted but not yet committed downstream; beyond it `append` rejects INGEST_BUSY. */
  maxOutstanding: number;
  /**
   * Cluster mode (ADR 0130): `append` resolves once downstream committed the packet to PostgreSQL
   * (`committed`), not at the fdatasync, so losing this node's disk loses nothing acknowledged.
   */
  acknowledgeAfterCommit?: boolean;
  /** Rotate the segment file after it reaches this size; default 64 MiB. */
  segmentBytes?: number;
  metrics: Metrics;
  log: FastifyBaseLogger;
}

export type DurableListener = (group: SpoolGroup) => void;
/** Returns false when it declines the packet (see `SpoolGroup.declinedSeqs`). */
export type AcceptedListener = (packet: IncomingPacket) => boolean;

const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;

export class PacketSpool implements PacketSink, Lifecycle {
  readonly name = 'packet-spool';
  private readonly segments: SpoolSegments;
  /** Groups not yet taken by `drain`; only the last one still takes packets. */
  private readonly waiting: PendingGroup[] = [];
  /** Packets in waiting groups and in the group in flight. */
  private pendingCount = 0;
  private draining: Promise<void> | undefined;
  private readonly listeners: DurableListener[] = [];
  private readonly acceptedListeners: AcceptedListener[] = [];
  private accepting = false;
  private stopping: Promise<void> | undefined;
  private spoolId: string | undefined;
  private nextSeq = 1;
  private durableSeq = 0;
  private lastFlushAt = -Infinity;
  private committedSeq = 0;
  /** acknowledgeAfterCommit: durable groups waiting for downstream's commit (commit-waiters.ts). */
  private readonly commitWaiters = new CommitWaiters();
  private readonly counted: ReturnType<typeof spoolMetrics>;

  constructor(private readonly options: PacketSpoolOptions) {
    this.segments = new SpoolSegments(
      options.dir,
      options.segmentBytes ?? DEFAULT_SEGMENT_BYTES,
      options.log,
    );
    this.counted = spoolMetrics(options.metrics, {
      outstanding: () => this.outstanding,
      durableBytes: () => this.segments.durableBytes,
    });
  }

  /** This spool's identity (readOrCreateSpoolId), known once started. */
  get id(): string {
    if (!this.spoolId) throw new Error('The packet spool has not started');
    return this.spoolId;
  }

  /** The highest seq whose record is durable. */
  get lastDurableSeq(): number {
    return this.durableSeq;
  }

  /** Packets accepted and not yet committed downstream (in `packets`): 0 once the table holds all. */
  get backlog(): number {
    return this.outstanding;
  }

  /** Registers a consumer of accepted packets, not yet durable (the live view); see above. */
  onAccepted(listener: AcceptedListener): void {
    this.acceptedListeners.push(listener);
  }

  /** Registers a consumer of durable groups (the ingest worker); see the failure behaviour above. */
  onDurable(listener: DurableListener): void {
    this.listeners.push(listener);
  }

  append(packet: IncomingPacket): Promise<void> {
    if (!this.accepting || this.commitWaiters.downstreamStopped) {
      return Promise.reject(new PacketRefusedError('INGEST_STOPPED', 'The packet spool is not running'));
    }
    if (this.outstanding >= this.options.maxOutstanding) {
      this.counted.refused.inc({ reason: 'busy' });
      return Promise.reject(new PacketRefusedError('INGEST_BUSY', 'Too many packets waiting; retry'));
    }
    let size: number;
    try {
      size = encodedRecordSize(packet);
    } catch (error) {
      this.counted.refused.inc({ reason: 'invalid' });
      return Promise.reject(new PacketRefusedError('INGEST_INVALID', (error as Error).message));
    }
    let group = this.waiting.at(-1);
    if (!group || group.packets.length >= MAX_GROUP_RECORDS || group.bytes + size > MAX_GROUP_BYTES) {
      group = new PendingGroup();
      this.waiting.push(group);
    }
    group.packets.push(packet);
    group.bytes += size;
    this.pendingCount += 1;
    this.draining ??= this.drain();
    for (const listener of this.acceptedListeners) {
      let taken = false;
      try {
        taken = listener(packet);
      } catch {
        // The live view only: the packet is stored whatever a listener does.
      }
      if (!taken && group.declined.at(-1) !== group.packets.length - 1)
        group.declined.push(group.packets.length - 1);
    }
    return group.done;
  }

  /**
   * Every durable record with seq > afterSeq, in seq order, in groups of at most about 4 MiB (for a
   * downstream that (re)starts). Synchronous, so no group can become durable while it reads; throws
   * when a segment file cannot be read.
   */
  readDurable(afterSeq: number): SpoolGroup[] {
    return this.segments.readDurable(afterSeq, MAX_GROUP_BYTES);
  }

  /** Downstream committed every record up to `seq`: frees room and deletes segments it covers. */
  committed(seq: number): void {
    if (seq <= this.committedSeq) return;
    this.committedSeq = seq;
    this.commitWaiters.committed(seq);
    this.segments.deleteCommitted(seq);
  }

  /**
   * acknowledgeAfterCommit: downstream stopped (the node shuts down), so appends still waiting for
   * their commit are refused: their senders were not acknowledged and send them again, to this node
   * after its restart or to another. The records stay in the spool and are dropped at the next start.
   */
  refuseUncommitted(): void {
    this.commitWaiters.refuseAll();
  }

  async start(): Promise<void> {
    const { dir, log } = this.options;
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await acquireLock(dir);
    } catch (error) {
      // The operator's to fix (a second server, permissions, a file in the path): name the setting.
      throw new StartupError(`STELLWERK_SPOOL_DIR: ${(error as Error).message}`);
    }
    try {
      const segments = await scanSegments(dir, log);
      this.spoolId = await readOrCreateSpoolId(dir);
      const committed = await this.options.readCommittedSeq(this.spoolId);
      const lastInFiles = segments.reduce((last, segment) => Math.max(last, segment.lastSeq), 0);
      // The database may be ahead of the files (spool directory lost or replaced): never reuse its seqs.
      this.nextSeq = Math.max(lastInFiles, committed) + 1;
      this.durableSeq = this.nextSeq - 1;
      this.committedSeq = committed;
      if (this.options.acknowledgeAfterCommit && lastInFiles > committed) {
        // Cluster mode: records the table lacks were never acknowledged; their senders sent them again,
        // to this node or another. Storing them now would store them twice.
        log.warn(
          { records: lastInFiles - committed, dir },
          'packet spool: dropping records that were never acknowledged (cluster mode: their senders sent them again)',
        );
        this.committedSeq = lastInFiles;
      }
      const earliest = segments.find((segment) => segment.lastSeq >= segment.firstSeq);
      if (earliest && earliest.firstSeq > committed + 1) {
        log.warn(
          { committed, firstSpooled: earliest.firstSeq, dir },
          'packet spool: records between the committed seq and the first spooled one are missing',
        );
      }
      await this.segments.adopt(segments, this.nextSeq, this.committedSeq);
      this.accepting = true;
    } catch (error) {
      await this.segments.close();
      await releaseLock(dir).catch(() => undefined);
      throw error;
    }
  }

  /** Writes what is queued (those appends resolve), then refuses new packets and releases the dir. */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private get outstanding(): number {
    return this.pendingCount + Math.max(0, this.durableSeq - this.committedSeq);
  }

  private async shutdown(): Promise<void> {
    if (!this.accepting) return;
    this.accepting = false;
    await this.draining;
    await this.segments.close();
    await releaseLock(this.options.dir);
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        // Let a small group gather for at most MIN_GROUP_INTERVAL_MS after the previous write began.
        const wait = this.lastFlushAt + MIN_GROUP_INTERVAL_MS - performance.now();
        if (wait > 0 && (this.waiting[0]?.packets.length ?? 0) < GATHER_BELOW_RECORDS)
          await new Promise((resolve) => setTimeout(resolve, wait));
        const group = this.waiting.shift();
        if (!group) break;
        this.lastFlushAt = performance.now();
        await this.flush(group);
      }
    } finally {
      this.draining = undefined;
    }
  }

  private async flush(group: PendingGroup): Promise<void> {
    const count = group.packets.length;
    const firstSeq = this.nextSeq;
    const lastSeq = firstSeq + count - 1;
    let target: OpenSegment | undefined;
    let bytes: Buffer;
    try {
      // Unpooled: the group's bytes go to the worker by transfer, which needs an ArrayBuffer of its own.
      bytes = Buffer.allocUnsafeSlow(group.bytes);
      let offset = 0;
      for (let i = 0; i < count; i += 1)
        offset = encodeRecordInto(bytes, offset, firstSeq + i, group.packets[i]!);
      if (offset !== bytes.length) throw new Error('a packet changed between append and write');
      target = await this.segments.target(firstSeq);
      await writeFully(target.handle, bytes, target.segment.durableBytes);
      if (!SYNCED_BY_WRITE) await target.handle.datasync();
    } catch (error) {
      this.pendingCount -= count;
      this.counted.refused.inc({ reason: 'store-failed' }, count);
      group.reject(
        new PacketRefusedError('INGEST_STORE_FAILED', `Packet spool failed: ${(error as Error).message}`),
      );
      if (target) await this.segments.discardUndurableBytes(target, this.nextSeq);
      return;
    }
    this.segments.written(target, bytes.length, lastSeq);
    this.nextSeq = lastSeq + 1;
    this.durableSeq = lastSeq;
    this.pendingCount -= count;
    this.counted.groupSize.observe(count);
    this.counted.spooled.inc(count);
    // Before resolving: a resolved append then finds the segments settled (stop, tests), at the cost
    // of one close + open + directory fsync per segment for the group that filled it.
    await this.segments.rotateIfFull(this.nextSeq, this.committedSeq);
    if (!this.options.acknowledgeAfterCommit || lastSeq <= this.committedSeq) group.resolve();
    else this.commitWaiters.hold({ lastSeq, resolve: group.resolve, reject: group.reject });
    const durable: SpoolGroup = { firstSeq, lastSeq, bytes };
    if (group.declined.length > 0) durable.declinedSeqs = group.declined.map((i) => firstSeq + i);
    for (const listener of this.listeners) {
      try {
        listener(durable);
      } catch {
        // Downstream reads what it lacks with readDurable when it (re)starts; durability is unaffected.
      }
    }
  }
}
