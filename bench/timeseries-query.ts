import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { AccountService } from '../server/src/accounts/account.service.js';
import { newId } from '../server/src/platform/crypto/ids.js';
import { planQuery } from '../server/src/timeseries/query/query.analyze.js';
import { compilePostgresSql } from '../server/src/timeseries/query/query.compile-rollup.js';
import type { Tenancy } from '../server/src/timeseries/query/query.compile-sql.js';
import { TimeSeriesQueryService } from '../server/src/timeseries/query/query.service.js';

/**
 * The query part of `npm run bench:timeseries`: "hourly mean over 30 days of one state" written in
 * the query language and run as the endpoint runs it (parse → plan → SQL compile → one read-only
 * statement under a statement timeout: TimeSeriesQueryService.runSql), timed from the query text to
 * the rows. Only the account check of the endpoint is left out (the bench passes the tenancy).
 */

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
const pct = (v: number[], p: number) =>
  [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor((p / 100) * v.length))]!;

/** One account, one twin per state (title `bench <n>`), one `flow` state each with the given ids. */
export async function seedStates(pool: pg.Pool, stateIds: string[]): Promise<Tenancy> {
  const accountId = newId();
  await pool.query(
    `INSERT INTO accounts (id, path, title, ui_settings, meta_info, modules, created_at, updated_at)
     VALUES ($1, ARRAY[$1::uuid], 'bench', '{}', '{}', '{}', now(), now())`,
    [accountId],
  );
  const twinIds = stateIds.map(() => newId());
  await pool.query(
    `INSERT INTO digital_twins (id, account_id, path, title, reference_id, custom_properties, tags, created_at, updated_at)
     SELECT t, $1, '{}', 'bench ' || n, 'bench-' || n, '{}', '{}', now(), now()
       FROM unnest($2::uuid[]) WITH ORDINALITY AS x(t, n)`,
    [accountId, twinIds],
  );
  await pool.query(
    `INSERT INTO data_states (id, account_id, twin_id, key, title, unit, source, meta, engine, created_at, updated_at)
     SELECT s, $1, t, 'flow', 'Flow', 'm³/h', NULL, '{}', '{}', now(), now()
       FROM unnest($2::uuid[], $3::uuid[]) AS x(s, t)`,
    [accountId, stateIds, twinIds],
  );
  await pool.query('ANALYZE digital_twins; ANALYZE data_states');
  return { accountId, includeSubAccounts: false };
}

export type QueryText = (stateIndex: number) => string;

/** By state id: the form a console uses once it knows the state. */
export const byStateId =
  (stateIds: string[], from: Date, to: Date): QueryText =>
  (i) =>
    `SELECT bucket(1h) AS hour, mean(value) AS mean WHERE state.id = '${stateIds[i]}' ` +
    `AND time >= '${from.toISOString()}' AND time < '${to.toISOString()}' GROUP BY hour ORDER BY hour LIMIT 1000`;

/** By twin title and state key (docs/timeseries-query.md's example): the states are found through joins. */
export const byTwinTitle =
  (from: Date, to: Date): QueryText =>
  (i) =>
    `SELECT bucket(1h) AS hour, mean(value) AS mean WHERE twin.title = 'bench ${i + 1}' AND state.key = 'flow' ` +
    `AND time >= '${from.toISOString()}' AND time < '${to.toISOString()}' GROUP BY hour ORDER BY hour LIMIT 1000`;

export class HourlyMeanBench {
  private readonly service: TimeSeriesQueryService;

  constructor(
    private readonly orm: MikroORM,
    private readonly tenancy: Tenancy,
    private readonly stateCount: number,
    private readonly clock: () => Date,
  ) {
    // runSql does not use the account service: the endpoint checks the account before it calls it.
    this.service = new TimeSeriesQueryService(() => orm.em.fork(), {} as AccountService, clock);
  }

  /**
   * EXPLAIN ANALYZE of the compiled statement (first line, then every scan of a ts_points partition),
   * then `queries` timed runs on random states after 20 warm-up runs. Warns when `expectIndexOnly`
   * and the plan reads ts_points other than by an index-only scan of the covering index.
   */
  async measure(label: string, text: QueryText, queries: number, expectIndexOnly = true): Promise<void> {
    // The statement runSql runs: on rollups for folded hours, on points for the others.
    const compiled = compilePostgresSql(planQuery(text(0), this.clock()), this.tenancy);
    const explained = await this.orm.em
      .getConnection()
      .execute<Array<{ 'QUERY PLAN': string }>>(
        `EXPLAIN (ANALYZE, COSTS OFF) ${compiled.sql}`,
        compiled.params,
      );
    const lines = explained.map((r) => r['QUERY PLAN']);
    const scans = lines
      .map((line) =>
        /(Index Only Scan|Bitmap Heap Scan|Index Scan|Seq Scan) (?:using \S+ )?on (ts_points_(?:p\d{4}_\d\d|default))(?: |$)|Heap Fetches: (\d+)/.exec(
          line,
        ),
      )
      .filter((m) => m !== null)
      .map((m) => (m[1] ? `${m[1]} on ${m[2]}` : `${m[3]} heap fetches`));
    const latencies: number[] = [];
    let buckets = 0;
    for (let i = 0; i < queries + 20; i++) {
      const q0 = performance.now();
      const plan = planQuery(text(Math.floor(Math.random() * this.stateCount)), this.clock());
      const rows = await this.service.runSql(plan, this.tenancy);
      if (i >= 20) latencies.push(performance.now() - q0);
      buckets = rows.length;
    }
    // Every state has points in every hour of the range: an empty answer measures nothing.
    if (buckets === 0) throw new Error(`${label}: the query answered no buckets`);
    console.log(
      `  ${label}: p50 ${median(latencies).toFixed(1)} ms, p99 ${pct(latencies, 99).toFixed(1)} ms (${buckets} buckets)`,
    );
    console.log(`    plan: ${lines[0]?.trim()} …; ${scans.join(', ') || 'no scan of ts_points found'}`);
    if (expectIndexOnly && !scans.some((s) => s.startsWith('Index Only Scan')))
      console.log('    WARNING: no index-only scan of ts_points: the covering index is not used');
  }
}
