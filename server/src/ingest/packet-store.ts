import pg from 'pg';
import type { Lifecycle } from '../platform/lifecycle.js';
import type { Metrics } from '../platform/metrics.js';
import { packetColumns } from './packet-columns.js';
import { PacketRefusedError, type IncomingPacket, type PacketSink } from './ingest.types.js';

/**
 * Durable packet store with group commit.
 *
 * Failure behaviour, in order:
 * - `append` resolves only after the packet's batch is committed (PostgreSQL WAL, synchronous_commit on),
 *   so a front door that acknowledges after `append` never acknowledges a packet that can be lost.
 * - One INSERT is in flight at a time; packets arriving meanwhile form the next batch. Under load batches
 *   grow (up to MAX_BATCH) and cost one commit each; when idle a packet is written at once.
 * - When more than `maxPending` packets wait, `append` rejects with INGEST_BUSY: the broker then does
 *   not acknowledge and the client retries; nothing is dropped silently.
 * - A failed INSERT rejects every packet of that batch (none was acknowledged).
 * - After commit, listeners get the stored packets with their ids (the ingest pipeline); a listener's
 *   failure never affects durability, because the pipeline replays from the store after a restart.
 * - Before commit, `onAppended` listeners see each accepted packet at once (the pipeline's visible
 *   stage: live push must not wait for the commit). Such a packet may still fail to commit, in which
 *   case it is never acknowledged; the listener must treat it as provisional. Each stored packet
 *   carries the object `append` was given (`incoming`) so the two can be matched.
 */

export interface StoredPacket extends IncomingPacket {
  id: bigint;
  /** The object given to `append` in this process; absent for packets re-read from the table. */
  incoming?: IncomingPacket;
}

export type StoredListener = (packets: StoredPacket[]) => void;
export type AppendedListener = (packet: IncomingPacket) => void;

interface Waiting {
  packet: IncomingPacket;
  resolve: () => void;
  reject: (error: Error) => void;
}

// One prepared statement per batch. The parameters are built by hand (packet-columns.ts): uuid and
// text arrays as literals, receive times as epoch milliseconds, and every payload in ONE binary
// parameter cut apart by offsets. node-postgres' generic array encoding (hex-escaping each bytea,
// formatting each Date) cost more main-thread time than the rest of the packet's path.
const INSERT = {
  name: 'stellwerk-packet-store-insert',
  text: `
  INSERT INTO packets (connector_id, device_key, received_at, payload, source)
  SELECT c, d, to_timestamp(r / 1000.0), substring($4::bytea FROM o FOR l), s
    FROM unnest($1::uuid[], $2::text[], $3::float8[], $5::int[], $6::int[], $7::text[])
    WITH ORDINALITY AS t(c, d, r, o, l, s, n)
   ORDER BY n
  RETURNING id`,
};

const MAX_BATCH = 2000;

export class PacketStore implements PacketSink, Lifecycle {
  readonly name = 'packet-store';
  private readonly pool: pg.Pool;
  private queue: Waiting[] = [];
  private flushing: Promise<void> | undefined;
  private readonly listeners: StoredListener[] = [];
  private readonly appendedListeners: AppendedListener[] = [];
  private stopped = false;
  private readonly batchSize;
  private readonly stored;
  private readonly refused;

  constructor(
    databaseUrl: string,
    private readonly maxPending: number,
    metrics: Metrics,
  ) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    // An idle connection dropped by the server (restart, failover) must not crash the process.
    this.pool.on('error', () => undefined);
    this.batchSize = metrics.histogram(
      'stellwerk_packet_store_batch_size',
      'Packets committed per batch',
      [1, 10, 50, 100, 500, 1000, 2000],
    );
    this.stored = metrics.counter('stellwerk_packets_stored_total', 'Packets committed to the packet store');
    this.refused = metrics.counter('stellwerk_packets_refused_total', 'Packets refused by the packet store', [
      'reason',
    ]);
    metrics.gauge('stellwerk_packet_store_pending', 'Packets waiting for their batch commit', [], (gauge) =>
      gauge.set(this.queue.length),
    );
  }

  /** Registers a consumer of committed packets (the ingest pipeline). */
  onStored(listener: StoredListener): void {
    this.listeners.push(listener);
  }

  /** Registers a consumer of accepted, not yet committed packets (see the failure behaviour above). */
  onAppended(listener: AppendedListener): void {
    this.appendedListeners.push(listener);
  }

  append(packet: IncomingPacket): Promise<void> {
    if (this.stopped)
      return Promise.reject(new PacketRefusedError('INGEST_STOPPED', 'The server is stopping'));
    if (this.queue.length >= this.maxPending) {
      this.refused.inc({ reason: 'busy' });
      return Promise.reject(new PacketRefusedError('INGEST_BUSY', 'Too many packets waiting; retry'));
    }
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ packet, resolve, reject });
      this.flushing ??= this.drain();
      for (const listener of this.appendedListeners) {
        try {
          listener(packet);
        } catch {
          // Provisional consumers only: the packet's durability does not depend on them.
        }
      }
    });
  }

  async start(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  /** Commits what is queued, then refuses new packets. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.flushing;
    await this.pool.end();
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        await this.commit(batch);
      }
    } finally {
      this.flushing = undefined;
    }
  }

  private async commit(batch: Waiting[]): Promise<void> {
    const packets = batch.map((w) => w.packet);
    let ids: bigint[];
    try {
      const result = await this.pool.query<{ id: string }>({ ...INSERT, values: packetColumns(packets) });
      ids = result.rows.map((r) => BigInt(r.id));
    } catch (error) {
      this.refused.inc({ reason: 'store-failed' }, batch.length);
      const refusal = new PacketRefusedError(
        'INGEST_STORE_FAILED',
        `Packet store failed: ${(error as Error).message}`,
      );
      for (const w of batch) w.reject(refusal);
      return;
    }
    this.batchSize.observe(batch.length);
    this.stored.inc(batch.length);
    for (const w of batch) w.resolve();
    const stored = packets.map((p, i): StoredPacket => ({ ...p, id: ids[i]!, incoming: p }));
    for (const listener of this.listeners) {
      try {
        listener(stored);
      } catch {
        // The pipeline replays from the store; a listener fault must not touch acknowledged packets.
      }
    }
  }
}
