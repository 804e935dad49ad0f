import type pg from 'pg';
import type { PacketMeta } from './packet-meta.js';
import type { StoredPacket } from './packet-store.js';

/**
 * Where the pipeline takes its next batch from: committed packets handed over in memory by the
 * packet store, and the packets table itself whenever memory may have missed some.
 *
 * Failure behaviour: memory is only a shortcut; the packets table is the truth. At start, and
 * whenever the in-memory queue overflows (the pipeline fell behind), the queue is dropped and the
 * feed reads `status IS NULL` rows above its position from the table instead, until it has caught up.
 * Memory therefore stays bounded and no committed packet is skipped. A failed read rejects `next()`;
 * the pipeline retries it.
 *
 * Relies on ids arriving in ascending order, which holds while this process's packet store is the
 * only writer (one INSERT in flight at a time). Several writing nodes need a per-node feed (ADR 0090).
 */

interface PacketRow {
  id: string;
  connector_id: string;
  device_key: string;
  received_at: Date;
  payload: Buffer;
  source: string;
  meta: PacketMeta | null;
}

const CATCH_UP_SQL = `
  SELECT id, connector_id, device_key, received_at, payload, source, meta
    FROM packets WHERE id > $1 AND status IS NULL ORDER BY id LIMIT $2`;

export interface FeedOptions {
  batchSize: number;
  /**
   * The most one batch takes while more is waiting (default `batchSize`). A pipeline that fell
   * behind takes larger batches: one batch writes a device's states, lastSeen and twin states once
   * however many of its packets it holds, so the work per packet falls as the backlog grows.
   */
  maxBatchSize?: number;
  /** Packets held in memory before the feed falls back to reading the table. */
  maxQueued: number;
  /** Payload bytes held in memory, likewise. */
  maxQueuedBytes: number;
  /**
   * Cluster mode (ADR 0130): every node stores packets and one processes them, so the feed reads only
   * the table: at once when this node stored packets, else every `pollMs`.
   */
  pollMs?: number;
}

export class PacketFeed {
  private queue: StoredPacket[] = [];
  private queuedBytes = 0;
  private catchUp = true;
  /** Incremented by each overflow; a catch-up read only ends catch-up if none happened meanwhile. */
  private overflows = 0;
  private position = 0n;
  private closed = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: FeedOptions,
  ) {}

  private get maxBatch(): number {
    return Math.max(this.options.batchSize, this.options.maxBatchSize ?? 0);
  }

  get queued(): number {
    return this.queue.length;
  }

  /**
   * Whether the next batch is as large as a batch can be, however long it is left: a full batch is
   * queued, or the table is being read after a start or an overflow (it returns up to a full batch at
   * once). Never in cluster mode: there every batch is read from the table, and what waits there is
   * only known by reading it.
   */
  get fullBatchWaiting(): boolean {
    if (this.options.pollMs !== undefined) return false;
    return this.catchUp || this.queue.length >= this.maxBatch;
  }

  /** Reading the table (start, overflow): the next batch is there as soon as it is asked for. */
  get catchingUp(): boolean {
    return this.catchUp;
  }

  get overflowCount(): number {
    return this.overflows;
  }

  /** Start reading the table above `cursor` (the highest id fully processed). */
  startAt(cursor: bigint): void {
    this.position = cursor;
    this.catchUp = true;
    this.notify();
  }

  /** Committed packets from the packet store, in ascending id order. */
  push(packets: StoredPacket[]): void {
    if (this.closed) return;
    if (this.options.pollMs !== undefined) return this.notify();
    for (const p of packets) {
      this.queue.push(p);
      this.queuedBytes += p.payload.length;
    }
    if (this.queue.length > this.options.maxQueued || this.queuedBytes > this.options.maxQueuedBytes) {
      this.queue = [];
      this.queuedBytes = 0;
      this.catchUp = true;
      this.overflows++;
    }
    this.notify();
  }

  /** The next batch in id order; waits while there is none; empty once closed. */
  async next(): Promise<StoredPacket[]> {
    while (!this.closed) {
      if (this.options.pollMs !== undefined) {
        const rows = await this.read();
        if (rows.length > 0) {
          this.position = rows[rows.length - 1]!.id;
          return rows;
        }
        await this.nap(this.options.pollMs);
        continue;
      }
      if (this.catchUp) {
        const overflows = this.overflows;
        const rows = await this.read();
        if (rows.length < this.maxBatch && overflows === this.overflows) this.catchUp = false;
        if (rows.length > 0) {
          this.position = rows[rows.length - 1]!.id;
          return rows;
        }
        continue;
      }
      const batch = this.take();
      if (batch.length > 0) return batch;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    return [];
  }

  close(): void {
    this.closed = true;
    this.queue = [];
    this.notify();
  }

  private take(): StoredPacket[] {
    // Packets the table read already returned may still be in the queue.
    let skip = 0;
    while (skip < this.queue.length && this.queue[skip]!.id <= this.position) skip++;
    const taken = this.queue.slice(0, skip + this.maxBatch);
    this.queue = this.queue.slice(taken.length);
    for (const p of taken) this.queuedBytes -= p.payload.length;
    const batch = taken.slice(skip);
    if (batch.length > 0) this.position = batch[batch.length - 1]!.id;
    return batch;
  }

  private async read(): Promise<StoredPacket[]> {
    const { rows } = await this.pool.query<PacketRow>(CATCH_UP_SQL, [
      this.position.toString(),
      this.maxBatch,
    ]);
    return rows.map((r) => {
      const packet: StoredPacket = {
        id: BigInt(r.id),
        connectorId: r.connector_id,
        deviceKey: r.device_key,
        receivedAt: r.received_at,
        payload: r.payload,
        source: r.source,
      };
      if (r.meta) packet.meta = r.meta;
      return packet;
    });
  }

  private nap(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => ((this.wake = undefined), resolve()), ms);
      this.wake = () => (clearTimeout(timer), resolve());
    });
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
