import type pg from 'pg';
import type { TimeSeriesPoint } from './timeseries.types.js';

/**
 * One point as outbox.ts encodes it: `[stateId, twinId, accountId, stateKey, timeMs, value, text]`.
 * Decoded here straight from the JSON text (no hex bytea, no objects per point for the postgres
 * target: the hot path of the writer). outbox-reader.test.ts pins it to `encodePoints`.
 */
export type OutboxTuple = [string, string, string, string, number, number | null, string | null];

export interface OutboxBatch {
  /** The cursor after this batch: the highest outbox id it covers. */
  toId: number;
  rows: number;
  tuples: OutboxTuple[];
  /** The tuples as points (built on first use). */
  readonly points: TimeSeriesPoint[];
}

export function tupleToPoint([
  stateId,
  twinId,
  accountId,
  stateKey,
  time,
  value,
  text,
]: OutboxTuple): TimeSeriesPoint {
  return { stateId, twinId, accountId, stateKey, time: new Date(time), value, text };
}

function batchOf(toId: number, rows: number, tuples: OutboxTuple[]): OutboxBatch {
  let points: TimeSeriesPoint[] | undefined;
  return {
    toId,
    rows,
    tuples,
    get points() {
      return (points ??= tuples.map(tupleToPoint));
    },
  };
}

export interface OutboxReaderOptions {
  maxRows?: number;
  /** A batch stops adding rows once it holds this many points (at least one row always). */
  maxPoints?: number;
  /** Least time a gap is waited for before it may be declared permanent. */
  gapGraceMs?: number;
  now?: () => number;
}

interface OutboxRow {
  id: string;
  points: string;
  xmax: string;
}

/**
 * Reads the outbox after a cursor without ever skipping a row that has not committed yet.
 *
 * Outbox ids come from a sequence, but transactions commit in any order: id 11 can be visible
 * while id 10 is still being written. Advancing the cursor past 11 would lose 10 for good. So the
 * reader only hands out the gap-free run after the cursor. A gap is either a transaction still in
 * flight or one that rolled back (sequence values are never reused). It is declared permanent
 * once every transaction that was running when the gap was seen has ended (the snapshot's
 * `xmin` has passed the `xmax` recorded then) and `gapGraceMs` has passed: any transaction that
 * took an id below a visible row started before that visible row committed.
 */
export class OutboxReader {
  private settledThrough = 0;
  private pendingGap: { maxId: number; xmax: bigint; seenAt: number } | undefined;
  private readonly maxRows: number;
  private readonly maxPoints: number;
  private readonly gapGraceMs: number;
  private readonly now: () => number;

  constructor(
    private readonly pool: pg.Pool,
    options: OutboxReaderOptions = {},
  ) {
    this.maxRows = options.maxRows ?? 1000;
    this.maxPoints = options.maxPoints ?? 20_000;
    this.gapGraceMs = options.gapGraceMs ?? 500;
    this.now = options.now ?? Date.now;
  }

  /** The next batch after `cursor`, or undefined when nothing can be delivered yet. */
  async next(cursor: number): Promise<OutboxBatch | undefined> {
    await this.settleGap();
    const { rows } = await this.pool.query<OutboxRow>({
      name: 'ts_outbox_read_after',
      text:
        // convert_from: the JSON arrives as text, half the bytes of bytea's hex form and no Buffer copy.
        "SELECT id, convert_from(points, 'UTF8') AS points, pg_snapshot_xmax(pg_current_snapshot())::text AS xmax " +
        'FROM ts_outbox WHERE id > $1 ORDER BY id LIMIT $2',
      values: [cursor, this.maxRows],
    });
    let expected = cursor + 1;
    let toId = cursor;
    let taken = 0;
    let tuples: OutboxTuple[] = [];
    for (const row of rows) {
      const id = Number(row.id);
      if (id !== expected && id - 1 > this.settledThrough) {
        this.pendingGap ??= {
          maxId: Number(rows[rows.length - 1]!.id),
          xmax: BigInt(row.xmax),
          seenAt: this.now(),
        };
        break;
      }
      const decoded = JSON.parse(row.points) as OutboxTuple[];
      tuples = tuples.length === 0 ? decoded : tuples.concat(decoded);
      taken++;
      toId = id;
      expected = id + 1;
      if (tuples.length >= this.maxPoints) break;
    }
    return taken === 0 ? undefined : batchOf(toId, taken, tuples);
  }

  /** True while a gap holds delivery back (tests and metrics). */
  get waitingForGap(): boolean {
    return this.pendingGap !== undefined;
  }

  private async settleGap(): Promise<void> {
    const gap = this.pendingGap;
    if (!gap || this.now() - gap.seenAt < this.gapGraceMs) return;
    const { rows } = await this.pool.query<{ xmin: string }>(
      'SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin',
    );
    if (BigInt(rows[0]!.xmin) < gap.xmax) return;
    this.settledThrough = Math.max(this.settledThrough, gap.maxId);
    this.pendingGap = undefined;
  }
}
