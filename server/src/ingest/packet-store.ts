import pg from 'pg';
import type { Lifecycle } from '../platform/lifecycle.js';
import { pgPoolUsage, trackPool } from '../platform/db/pool-metrics.js';
import type { Metrics } from '../platform/metrics.js';
import { packetColumns } from './packet-columns.js';
import type { IncomingPacket } from './ingest.types.js';

/** Each spool (one per node) has its own position (`system_settings` key), named by its id. */
export const spoolPositionKey = (spoolId: string) => `packet_spool_position:${spoolId}`;

/**
 * The packet table's writer (ADR 0103): moves spooled packets — already durable in the packet spool and
 * already acknowledged — into `packets`, in the ingest worker thread.
 *
 * Failure behaviour, in order:
 * - One INSERT is in flight at a time; packets arriving meanwhile form the next batch (up to MAX_BATCH).
 *   Each batch's statement also records the highest spool sequence number it holds
 *   (`packet_spool_position`), so after a crash the spool replays exactly what the table lacks.
 *   `onCommittedSeq` listeners hear that number after the commit (the spool may then drop them).
 * - A batch is never refused (its packets were acknowledged): the database unavailable → retried with
 *   backoff until it commits or the store stops (the spool keeps the packets); data the database
 *   refuses (SQLSTATE class 22/23) → the batch is split until the offending packet is alone, which is
 *   logged, counted and skipped (its position still recorded).
 * - After commit, `onStored` listeners get the packets with their ids. A listener's failure never
 *   affects the table: the pipeline replays from its cursor.
 * - `firstArrivedId`: the id of the first packet that arrived while this store ran, as opposed to
 *   packets replayed from the spool at its start. Ids grow in spool order, so every packet with a
 *   smaller id was replayed: the main thread never showed it live (ADR 0104).
 */

export interface StoredPacket extends IncomingPacket {
  id: bigint;
  /** The live view declined it on arrival (ADR 0104); only known for packets not re-read from the table. */
  notShownLive?: boolean;
}

export type StoredListener = (packets: StoredPacket[]) => void;

export type CommittedSeqListener = (seq: number) => void;

/** A spooled packet with its spool sequence number; `replayed`: read back from the spool at a start. */
export type SpooledPacket = IncomingPacket & { seq: number; replayed?: boolean; notShownLive?: boolean };

// One prepared statement per batch. The parameters are built by hand (packet-columns.ts): uuid and
// text arrays as literals, receive times as epoch milliseconds, and every payload in ONE binary
// parameter cut apart by offsets. node-postgres' generic array encoding (hex-escaping each bytea,
// formatting each Date) cost more main-thread time than the rest of the packet's path.
const INSERT = {
  name: 'stellwerk-packet-store-insert',
  text: `
  INSERT INTO packets (connector_id, device_key, received_at, payload, source, meta)
  SELECT c, d, to_timestamp(r / 1000.0), substring($4::bytea FROM o FOR l), s, m::jsonb
    FROM unnest($1::uuid[], $2::text[], $3::float8[], $5::int[], $6::int[], $7::text[], $8::text[])
    WITH ORDINALITY AS t(c, d, r, o, l, s, m, n)
   ORDER BY n
  RETURNING id`,
};

// The same INSERT plus the spool position, in one statement (one implicit transaction). RETURNING of
// a data-modifying CTE has no order of its own; ids are assigned in `n` order, so ORDER BY id keeps it.
const INSERT_SPOOLED = {
  name: 'stellwerk-packet-store-insert-spooled',
  text: `
  WITH stored AS (${INSERT.text}),
  position AS (
    INSERT INTO system_settings (key, value, updated_at)
    VALUES ($10, to_jsonb($9::bigint::text), now())
    ON CONFLICT (key) DO UPDATE
      SET value = to_jsonb(GREATEST((system_settings.value #>> '{}')::bigint, $9::bigint)::text),
          updated_at = now())
  SELECT id FROM stored ORDER BY id`,
};

const POSITION_ONLY = `
  INSERT INTO system_settings (key, value, updated_at) VALUES ($2, to_jsonb($1::bigint::text), now())
  ON CONFLICT (key) DO UPDATE
    SET value = to_jsonb(GREATEST((system_settings.value #>> '{}')::bigint, $1::bigint)::text), updated_at = now()`;

const MAX_BATCH = 2000;

/**
 * Cluster mode (ADR 0130): taken in each insert's transaction, so the packets of all nodes commit in
 * id order and the single ingest cursor never passes an id that commits later.
 */
export const PACKET_INSERT_LOCK = 0x5354_4c50; // STLP

const RETRY_DELAYS_MS = [100, 250, 500, 1000, 2000, 5000];

/** Highest spool sequence number whose packet is in `packets` (0: none yet). */
export async function readSpoolPosition(db: Pick<pg.Pool, 'query'>, key: string): Promise<number> {
  const { rows } = await db.query<{ seq: string | null }>(
    `SELECT value #>> '{}' AS seq FROM system_settings WHERE key = $1`,
    [key],
  );
  return Number(rows[0]?.seq ?? 0);
}

/** SQLSTATE classes 22 (data exception) and 23 (integrity): the data, not the database, is at fault. */
const refusesData = (error: unknown) => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^2[23]/.test(code);
};

export class PacketStore implements Lifecycle {
  readonly name = 'packet-store';
  private readonly pool: pg.Pool;
  private queue: SpooledPacket[] = [];
  private flushing: Promise<void> | undefined;
  private readonly listeners: StoredListener[] = [];
  private arrivedFrom: bigint | undefined;
  private readonly committedSeqListeners: CommittedSeqListener[] = [];
  private stopped = false;
  private wakeRetry: (() => void) | undefined;
  private readonly batchSize;
  private readonly stored;
  private readonly skipped;

  constructor(
    databaseUrl: string,
    /** `spoolPositionKey(spool id)`. */
    private readonly positionKey: string,
    metrics: Metrics,
    private readonly log?: {
      warn(fields: object, message: string): void;
      error(fields: object, message: string): void;
    },
    /** Cluster mode: inserts serialised across nodes (PACKET_INSERT_LOCK). */
    private readonly serialised = false,
  ) {
    this.pool = new pg.Pool({
      connectionString: databaseUrl,
      max: 2,
      application_name: 'stellwerk-packet-store',
    });
    // An idle connection dropped by the server (restart, failover) must not crash the process.
    this.pool.on('error', () => undefined);
    trackPool(metrics, 'ingest-packets', pgPoolUsage(this.pool));
    this.batchSize = metrics.histogram(
      'stellwerk_packet_store_batch_size',
      'Packets committed per batch',
      [1, 10, 50, 100, 500, 1000, 2000],
    );
    this.stored = metrics.counter('stellwerk_packets_stored_total', 'Packets committed to the packet store');
    this.skipped = metrics.counter(
      'stellwerk_packets_skipped_total',
      'Spooled packets whose data PostgreSQL refused (logged, not stored)',
    );
    metrics.gauge(
      'stellwerk_packet_store_pending',
      'Spooled packets waiting for their INSERT into the packet table',
      [],
      (gauge) => gauge.set(this.queue.length),
    );
  }

  /** Registers a consumer of committed packets (the ingest pipeline). */
  onStored(listener: StoredListener): void {
    this.listeners.push(listener);
  }

  /** Hears the highest spool sequence number committed with each batch of spooled packets. */
  onCommittedSeq(listener: CommittedSeqListener): void {
    this.committedSeqListeners.push(listener);
  }

  /** Spooled packets (already durable and acknowledged, in sequence order): see the failure behaviour. */
  appendSpooled(packets: readonly SpooledPacket[]): void {
    if (this.stopped) return; // still in the spool: the next start moves them
    for (const packet of packets) this.queue.push(packet);
    this.flushing ??= this.drain();
  }

  /** Resolves when every packet appended so far is in the table (or the store stopped). */
  async flushed(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** See the failure behaviour above; undefined until such a packet is committed. */
  get firstArrivedId(): bigint | undefined {
    return this.arrivedFrom;
  }

  /** The spool position already in `packets` (see `readSpoolPosition`). */
  spoolPosition(): Promise<number> {
    return readSpoolPosition(this.pool, this.positionKey);
  }

  async start(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  /** Commits what is queued (unless the database is gone), then takes no more. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.wakeRetry?.();
    await this.flushing;
    await this.pool.end();
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        await this.commitSpooled(batch, batch[batch.length - 1]!.seq);
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /** Spooled packets cannot be refused (they were acknowledged): retry, or split out what the data breaks. */
  private async commitSpooled(packets: SpooledPacket[], lastSeq: number): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await this.insert([...packetColumns(packets), lastSeq, this.positionKey]);
        this.committed(
          packets,
          result.rows.map((r) => BigInt(r.id)),
        );
        return this.tellCommittedSeq(lastSeq);
      } catch (error) {
        if (this.stopped) return; // the spool still holds them
        if (refusesData(error)) return this.splitRefused(packets, lastSeq, error);
        const delay = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)]!;
        if (attempt === 0) this.log?.warn({ err: error }, 'packet store: database unavailable; retrying');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          this.wakeRetry = () => (clearTimeout(timer), resolve());
        });
        this.wakeRetry = undefined;
      }
    }
  }

  private async insert(values: unknown[]): Promise<pg.QueryResult<{ id: string }>> {
    if (!this.serialised) return this.pool.query<{ id: string }>({ ...INSERT_SPOOLED, values });
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [PACKET_INSERT_LOCK]);
      const result = await client.query<{ id: string }>({ ...INSERT_SPOOLED, values });
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw error;
    } finally {
      client.release(broken);
    }
  }

  private async splitRefused(batch: SpooledPacket[], lastSeq: number, error: unknown): Promise<void> {
    if (batch.length > 1) {
      const half = Math.ceil(batch.length / 2);
      await this.commitSpooled(batch.slice(0, half), batch[half - 1]!.seq);
      return this.commitSpooled(batch.slice(half), lastSeq);
    }
    const packet = batch[0]!;
    this.skipped.inc();
    this.log?.error(
      { err: error, seq: lastSeq, connectorId: packet.connectorId, deviceKey: packet.deviceKey },
      'packet store: the database refused a spooled packet; it is skipped',
    );
    try {
      await this.pool.query(POSITION_ONLY, [lastSeq, this.positionKey]);
    } catch {
      // Not recorded: the next batch's position covers it, or a restart meets the packet again.
    }
    this.tellCommittedSeq(lastSeq);
  }

  private tellCommittedSeq(seq: number): void {
    for (const listener of this.committedSeqListeners) {
      try {
        listener(seq);
      } catch {
        // The position is in the database; a listener fault changes nothing there.
      }
    }
  }

  private committed(packets: SpooledPacket[], ids: bigint[]): void {
    this.batchSize.observe(packets.length);
    this.stored.inc(packets.length);
    if (this.arrivedFrom === undefined) {
      const first = packets.findIndex((p) => !p.replayed);
      if (first >= 0) this.arrivedFrom = ids[first];
    }
    const stored = packets.map((p, i): StoredPacket => ({ ...p, id: ids[i]! }));
    for (const listener of this.listeners) {
      try {
        listener(stored);
      } catch {
        // The pipeline replays from the store; a listener fault must not touch acknowledged packets.
      }
    }
  }
}
