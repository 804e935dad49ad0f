import type pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import type { Lifecycle } from '../platform/lifecycle.js';
import { lockKey, TIMESERIES_LOCK_SPACE } from './cluster-lock.js';
import { floorToHour } from './rollups.js';

/**
 * Monthly partitions of `ts_points` (UTC months, named `ts_points_pYYYY_MM`), kept by a daily run
 * and one at start:
 * - created from `monthsBehind` before to `monthsAhead` after the current month, plus every month
 *   that has rows in the default partition (late or far-future points): those rows are moved into
 *   the new partition in the same transaction that attaches it (PostgreSQL refuses to attach a
 *   range while the default partition holds rows in it);
 * - dropped whole once they end before the longest account retention (retention.ts deletes
 *   per account inside the kept ones); default-partition rows that old are deleted in chunks.
 * Every step is idempotent and serialised across nodes by a transaction-level advisory lock.
 */

export interface Partition {
  name: string;
  /** undefined for the default partition */
  from?: Date;
  to?: Date;
}

export interface PartitionReport {
  created: string[];
  dropped: string[];
  movedFromDefault: number;
  deletedFromDefault: number;
}

export interface PartitionMaintenanceOptions {
  pool: pg.Pool;
  log: FastifyBaseLogger;
  clock: () => Date;
  everyMs?: number;
  monthsBehind?: number;
  monthsAhead?: number;
}

const NAME = /^ts_points_p(\d{4})_(\d{2})$/;
const DEFAULT_PARTITION = 'ts_points_default';
const LOCK = lockKey('partitions');
const CHUNK = 10_000;

const monthStart = (year: number, month: number) => new Date(Date.UTC(year, month, 1));
const partitionName = (from: Date) =>
  `ts_points_p${from.getUTCFullYear()}_${String(from.getUTCMonth() + 1).padStart(2, '0')}`;

/** The partitions of ts_points, from the catalog. */
export async function listPartitions(db: Pick<pg.Pool, 'query'>): Promise<Partition[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'ts_points'::regclass ORDER BY c.relname`,
  );
  // Only names this module makes: they are used as identifiers in SQL.
  return rows
    .filter(({ name }) => /^ts_points_[a-z0-9_]+$/.test(name))
    .map(({ name }) => {
      const match = NAME.exec(name);
      if (!match) return { name };
      const from = monthStart(Number(match[1]), Number(match[2]) - 1);
      return { name, from, to: monthStart(from.getUTCFullYear(), from.getUTCMonth() + 1) };
    });
}

/** `now` minus the longest retention of any account (24 months without accounts), down to the hour. */
export async function longestRetentionCutoff(db: Pick<pg.Pool, 'query'>, now: Date): Promise<Date> {
  const { rows } = await db.query<{ cutoff: Date }>(
    `SELECT (($1::timestamptz AT TIME ZONE 'UTC') - coalesce(max(retention_months), 24) * interval '1 month')
              AT TIME ZONE 'UTC' AS cutoff FROM accounts`,
    [now],
  );
  // Whole hours, so the hourly rollups are cut exactly where the points are.
  return floorToHour(rows[0]!.cutoff);
}

export class PartitionMaintenance implements Lifecycle {
  readonly name = 'timeseries-partitions';
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<PartitionReport | undefined> | undefined;

  constructor(private readonly options: PartitionMaintenanceOptions) {}

  async start(): Promise<void> {
    await this.run();
    this.timer = setInterval(() => void this.run(), this.options.everyMs ?? 24 * 3600_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.inFlight;
  }

  /** One pass; failures are logged and retried by the next pass (the default partition catches all). */
  run(): Promise<PartitionReport | undefined> {
    this.inFlight ??= this.maintain()
      .catch((error: unknown) => {
        this.options.log.warn({ err: error }, 'time-series partition maintenance failed');
        return undefined;
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  private async maintain(): Promise<PartitionReport> {
    const { pool } = this.options;
    const now = this.options.clock();
    const cutoff = await longestRetentionCutoff(pool, now);
    const report: PartitionReport = { created: [], dropped: [], movedFromDefault: 0, deletedFromDefault: 0 };
    const wanted = new Map<string, Date>();
    const behind = this.options.monthsBehind ?? 1;
    const ahead = this.options.monthsAhead ?? 3;
    for (let offset = -behind; offset <= ahead; offset++) {
      const from = monthStart(now.getUTCFullYear(), now.getUTCMonth() + offset);
      wanted.set(partitionName(from), from);
    }
    const { rows: stray } = await pool.query<{ month: string }>(
      `SELECT DISTINCT to_char("time" AT TIME ZONE 'UTC', 'YYYY-MM') AS month FROM ${DEFAULT_PARTITION}`,
    );
    for (const { month } of stray) {
      const [year, mm] = month.split('-').map(Number) as [number, number];
      const from = monthStart(year, mm - 1);
      // A month entirely before the cutoff gets no partition: its rows are deleted below.
      if (monthStart(year, mm) > cutoff) wanted.set(partitionName(from), from);
    }
    const existing = await listPartitions(pool);
    const names = new Set(existing.map((p) => p.name));
    for (const [name, from] of [...wanted].sort(([a], [b]) => a.localeCompare(b))) {
      if (names.has(name)) continue;
      const moved = await this.createPartition(name, from);
      if (moved !== undefined) {
        report.created.push(name);
        report.movedFromDefault += moved;
      }
    }
    for (const partition of existing) {
      if (partition.to && partition.to <= cutoff && (await this.dropPartition(partition.name)))
        report.dropped.push(partition.name);
    }
    // Points before the cutoff that stay are in the partition holding the cutoff (retention cuts
    // them per account); the rollups go as far as the points do.
    const holding = (await listPartitions(pool)).find(
      (p) => p.from && p.to && p.from < cutoff && cutoff < p.to,
    );
    const rollupCut = holding?.from ?? cutoff;
    await this.deleteRollupsBefore(rollupCut);
    for (;;) {
      const deleted = await pool.query(
        `DELETE FROM ${DEFAULT_PARTITION} WHERE ctid = ANY(ARRAY(
           SELECT ctid FROM ${DEFAULT_PARTITION} WHERE "time" < $1 LIMIT $2))`,
        [cutoff, CHUNK],
      );
      report.deletedFromDefault += deleted.rowCount ?? 0;
      if ((deleted.rowCount ?? 0) < CHUNK) break;
    }
    // Again: a fold running meanwhile may have re-folded a marked hour from points since deleted.
    await this.deleteRollupsBefore(rollupCut);
    if (report.created.length + report.dropped.length > 0) {
      this.options.log.info(report, 'time-series partitions maintained');
    }
    return report;
  }

  /** Creates and attaches one month; returns the rows moved from the default partition, or undefined if it existed. */
  private async createPartition(name: string, from: Date): Promise<number | undefined> {
    const to = monthStart(from.getUTCFullYear(), from.getUTCMonth() + 1);
    // DDL cannot take parameters; `name`, `from` and `to` are computed from integers above, never input.
    const [lower, upper] = [from.toISOString(), to.toISOString()];
    return this.inTransaction(async (client) => {
      const { rows } = await client.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [
        name,
      ]);
      if (rows[0]?.found) return undefined;
      await client.query(`CREATE TABLE ${name} (LIKE ts_points INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
      // Vacuum after every 100,000 inserted rows, not after 20% of the partition: per-state reads are
      // index-only scans only on all-visible pages (docs/performance.md: 5 ms instead of 280 ms p99).
      await client.query(
        `ALTER TABLE ${name} SET (autovacuum_vacuum_insert_threshold = 100000, autovacuum_vacuum_insert_scale_factor = 0)`,
      );
      // The matching CHECK lets ATTACH skip scanning the new table.
      await client.query(
        `ALTER TABLE ${name} ADD CONSTRAINT ${name}_range CHECK ("time" >= '${lower}' AND "time" < '${upper}')`,
      );
      const moved = await client.query(
        `WITH moved AS (DELETE FROM ${DEFAULT_PARTITION} WHERE "time" >= $1 AND "time" < $2 RETURNING *)
         INSERT INTO ${name} (state_id, "time", value, text) SELECT state_id, "time", value, text FROM moved`,
        [from, to],
      );
      await client.query(
        `ALTER TABLE ts_points ATTACH PARTITION ${name} FOR VALUES FROM ('${lower}') TO ('${upper}')`,
      );
      await client.query(`ALTER TABLE ${name} DROP CONSTRAINT ${name}_range`);
      return moved.rowCount ?? 0;
    });
  }

  /**
   * Hourly rollups of every state before `cutoff` (a whole hour no later than any point kept), in
   * chunks: the points there are dropped with their partitions or deleted from the default.
   */
  private async deleteRollupsBefore(cutoff: Date): Promise<void> {
    for (;;) {
      const deleted = await this.options.pool.query(
        `DELETE FROM ts_rollup_hourly WHERE ctid = ANY(ARRAY(
           SELECT ctid FROM ts_rollup_hourly WHERE hour < $1 LIMIT $2))`,
        [cutoff, CHUNK],
      );
      if ((deleted.rowCount ?? 0) < CHUNK) break;
    }
  }

  private async dropPartition(name: string): Promise<boolean> {
    return this.inTransaction(async (client) => {
      const { rows } = await client.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [
        name,
      ]);
      if (!rows[0]?.found) return false;
      await client.query(`DROP TABLE "${name}"`);
      return true;
    });
  }

  private async inTransaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.options.pool.connect();
    try {
      await client.query('BEGIN');
      // Never queue behind a long query while holding locks that would block ingest behind us.
      await client.query("SET LOCAL lock_timeout = '5s'");
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [TIMESERIES_LOCK_SPACE, LOCK]);
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}
