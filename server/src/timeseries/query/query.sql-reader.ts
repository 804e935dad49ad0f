import pg from 'pg';
import type { CompiledSql } from './query.compile-sql.js';

/** How long one query may run unless configured otherwise. */
export const QUERY_STATEMENT_TIMEOUT_MS = 30_000;

export interface SqlReaderOptions {
  databaseUrl: string;
  /** A statement running longer is cancelled (SQLSTATE 57014); default QUERY_STATEMENT_TIMEOUT_MS. */
  statementTimeoutMs?: number;
  /** Connections per pool (two pools: cached generic plans, and plans made per call). */
  connections?: number;
  /** At most this many distinct statement texts are kept prepared; later ones are planned per call. */
  maxPrepared?: number;
}

/** The ORM's type handling, so rows read the same on both paths: times and intervals stay text. */
function ormLikeTypes(): pg.CustomTypesConfig {
  const types = new pg.TypeOverrides();
  for (const oid of [1082, 1114, 1184, 1186]) types.setTypeParser(oid, (text: string) => text);
  return types;
}

/**
 * Runs the query endpoint's compiled statements on connections of their own, one round trip each.
 *
 * Every connection is read-only and carries the statement timeout from its start
 * (`default_transaction_read_only`, `statement_timeout`), so a statement needs neither a
 * transaction nor a `SET` of its own: defence in depth against a compiler bug, as before, without
 * three extra round trips.
 *
 * Statements whose plan does not depend on the values bound (`CompiledSql.genericPlan`, the rollup
 * statement of one state's chart) run as named prepared statements on connections with
 * `plan_cache_mode = force_generic_plan`: planned once per connection instead of on every call (the
 * four branches over every time partition took 2 ms to plan, more than a 90-day chart takes to run),
 * with the partitions pruned when it executes. PostgreSQL's own choice (`auto`) never takes the generic
 * plan for them: its estimate counts every partition. Other statements keep a plan made for their
 * values, on connections with the default mode.
 */
export class TimeSeriesSqlReader {
  private readonly generic: pg.Pool;
  private readonly custom: pg.Pool;
  private readonly names = new Map<string, string>();
  private readonly maxPrepared: number;

  constructor(options: SqlReaderOptions) {
    const settings = `-c default_transaction_read_only=on -c statement_timeout=${Math.trunc(options.statementTimeoutMs ?? QUERY_STATEMENT_TIMEOUT_MS)}`;
    const pool = (extra: string) => {
      const created = new pg.Pool({
        connectionString: options.databaseUrl,
        max: options.connections ?? 3,
        application_name: 'stellwerk-timeseries-query',
        options: `${settings}${extra}`,
        types: ormLikeTypes(),
      });
      // An idle connection dropped by the server must not crash the process; the next query reconnects.
      created.on('error', () => undefined);
      return created;
    };
    this.generic = pool(' -c plan_cache_mode=force_generic_plan');
    this.custom = pool('');
    this.maxPrepared = options.maxPrepared ?? 200;
  }

  get pools(): { generic: pg.Pool; custom: pg.Pool } {
    return { generic: this.generic, custom: this.custom };
  }

  async select(statement: CompiledSql): Promise<Array<Record<string, unknown>>> {
    const { text, values } = numberedPlaceholders(statement.sql, statement.params);
    const name = statement.genericPlan ? this.preparedName(text) : null;
    const result = name
      ? await this.generic.query({ name, text, values })
      : await this.custom.query({ text, values });
    return result.rows as Array<Record<string, unknown>>;
  }

  async close(): Promise<void> {
    await Promise.all([this.generic.end(), this.custom.end()]);
  }

  /** Bounded: each prepared statement holds its plan in every backend that ran it. */
  private preparedName(text: string): string | null {
    const known = this.names.get(text);
    if (known) return known;
    if (this.names.size >= this.maxPrepared) return null;
    const name = `stellwerk_ts_${this.names.size}`;
    this.names.set(text, name);
    return name;
  }
}

/**
 * The compiler's knex-style `?` placeholders as PostgreSQL's `$n`, an array value standing for a
 * list (`IN (?)` with three ids becomes `IN ($1, $2, $3)`), as knex binds them on the ORM path.
 * The compiled text holds no other `?`: every literal is bound.
 */
export function numberedPlaceholders(
  sql: string,
  params: readonly unknown[],
): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  let next = 0;
  const text = sql.replace(/\?/g, () => {
    if (next >= params.length) throw new Error('More placeholders than bound values');
    const value = params[next++];
    const items = Array.isArray(value) ? value : [value];
    if (items.length === 0) throw new Error('An empty list cannot be bound');
    return items.map((item) => `$${values.push(item)}`).join(', ');
  });
  if (next !== params.length) throw new Error('More bound values than placeholders');
  return { text, values };
}
