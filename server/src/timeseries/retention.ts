import type pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import type { Lifecycle } from '../platform/lifecycle.js';
import { ClusterLock, lockKey } from './cluster-lock.js';
import { listPartitions } from './partitions.js';
import { floorToHour } from './rollups.js';

export interface RetentionOptions {
  databaseUrl: string;
  pool: pg.Pool;
  log: FastifyBaseLogger;
  clock: () => Date;
  everyMs?: number;
  /** Rows per DELETE: short statements, so ingest and queries never wait long behind one. */
  chunk?: number;
  /** Pause between chunks, leaving the database to ingest. */
  pauseMs?: number;
}

export interface RetentionReport {
  deleted: number;
  accounts: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Per-account retention (`accounts.retention_months`, decimal, default 24): deletes the points of
 * an account's states older than now minus its retention, rounded down to the hour, and their
 * hourly rollups with them (whole hours on both sides, so the rollups stay exact). Months are
 * calendar months in UTC; a fraction of a month is 30 days × the fraction (PostgreSQL interval
 * arithmetic: 0.5 → 15 days).
 *
 * Deletes run per partition in chunks of `chunk` rows located by ctid (a TID scan; row locks
 * only, no table locks), with a pause between chunks, so ingest is never blocked. One node runs
 * it (session advisory lock; the others skip the pass). Whole partitions older than the longest
 * retention are dropped by the partition maintenance instead.
 */
export class RetentionJob implements Lifecycle {
  readonly name = 'timeseries-retention';
  private readonly lock: ClusterLock;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<RetentionReport | undefined> | undefined;
  private stopping = false;

  constructor(private readonly options: RetentionOptions) {
    this.lock = new ClusterLock(options.databaseUrl, lockKey('retention'));
  }

  async start(): Promise<void> {
    this.stopping = false;
    // Not awaited: a long first pass must not delay the server's start.
    void this.run();
    this.timer = setInterval(() => void this.run(), this.options.everyMs ?? 3600_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.inFlight;
    await this.lock.release();
  }

  /** One pass; undefined when another node holds the job or the pass failed (logged). */
  run(): Promise<RetentionReport | undefined> {
    this.inFlight ??= this.pass()
      .catch((error: unknown) => {
        this.options.log.warn({ err: error }, 'time-series retention failed');
        return undefined;
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  private async pass(): Promise<RetentionReport | undefined> {
    if (!(await this.lock.tryAcquire())) return undefined;
    try {
      const { pool } = this.options;
      const chunk = this.options.chunk ?? 5000;
      const { rows: accounts } = await pool.query<{ id: string; cutoff: Date }>(
        `SELECT id, (($1::timestamptz AT TIME ZONE 'UTC') - retention_months * interval '1 month')
                      AT TIME ZONE 'UTC' AS cutoff
           FROM accounts ORDER BY id`,
        [this.options.clock()],
      );
      const partitions = await listPartitions(pool);
      let deleted = 0;
      for (const expiring of accounts) {
        const account = { id: expiring.id, cutoff: floorToHour(expiring.cutoff) };
        // Rollups first: between the two, a chart reads neither the hours nor their points.
        if (!(await this.deleteRollups(account, chunk))) return { deleted, accounts: accounts.length };
        // Partitions starting after the cutoff cannot hold expired points.
        for (const partition of partitions.filter((p) => !p.from || p.from < account.cutoff)) {
          for (;;) {
            if (this.stopping) return { deleted, accounts: accounts.length };
            // Partition names come from the catalog (ts_points_pYYYY_MM, ts_points_default).
            const result = await pool.query(
              `DELETE FROM "${partition.name}" WHERE ctid = ANY(ARRAY(
                 SELECT p.ctid FROM "${partition.name}" p
                  WHERE p.state_id IN (SELECT s.id FROM data_states s WHERE s.account_id = $1)
                    AND p."time" < $2
                  LIMIT $3))`,
              [account.id, account.cutoff, chunk],
            );
            const count = result.rowCount ?? 0;
            deleted += count;
            if (count < chunk) break;
            await sleep(this.options.pauseMs ?? 20);
          }
        }
        // And after: a fold running meanwhile may have re-folded a marked hour from points since deleted.
        if (!(await this.deleteRollups(account, chunk))) return { deleted, accounts: accounts.length };
      }
      if (deleted > 0) this.options.log.info({ deleted }, 'time-series retention removed expired points');
      return { deleted, accounts: accounts.length };
    } finally {
      await this.lock.release();
    }
  }

  /** The account's rollup hours before its cutoff, in chunks; false when stopped. */
  private async deleteRollups(account: { id: string; cutoff: Date }, chunk: number): Promise<boolean> {
    for (;;) {
      if (this.stopping) return false;
      const result = await this.options.pool.query(
        `DELETE FROM ts_rollup_hourly WHERE ctid = ANY(ARRAY(
           SELECT r.ctid FROM ts_rollup_hourly r
            WHERE r.state_id IN (SELECT s.id FROM data_states s WHERE s.account_id = $1)
              AND r.hour < $2
            LIMIT $3))`,
        [account.id, account.cutoff, chunk],
      );
      if ((result.rowCount ?? 0) < chunk) return true;
      await sleep(this.options.pauseMs ?? 20);
    }
  }
}
