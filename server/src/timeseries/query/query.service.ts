import type { EntityManager } from '@mikro-orm/postgresql';
import type { AccountService } from '../../accounts/account.service.js';
import type { Principal } from '../../auth/principal.js';
import { scopeFilter } from '../../permission-scopes/scope-filter.js';
import { AppError } from '../../platform/errors.js';
import type { TimeSeriesReads, TimeSeriesTarget } from '../timeseries.types.js';
import { pgTimestamptzToIso } from '../../platform/db/pg-timestamp.js';
import { planQuery } from './query.analyze.js';
import type { StateRow } from './query.columns.js';
import { compilePostgresSql } from './query.compile-rollup.js';
import { compileStatesSql, type CompiledSql, type Tenancy } from './query.compile-sql.js';
import { evaluatePlan, type Cell } from './query.evaluate.js';
import type { OutputType, Plan } from './query.plan.js';
import { stateLevelFilter, timeRange } from './query.split.js';
import { QUERY_STATEMENT_TIMEOUT_MS, type TimeSeriesSqlReader } from './query.sql-reader.js';

export interface TimeSeriesQueryInput {
  query: string;
  /** The account to query in (default: the caller's own); it must be reachable. */
  accountId?: string;
  /** Also read the twins of every account below it. */
  includeSubAccounts?: boolean;
}

export interface TimeSeriesQueryResult {
  columns: Array<{ name: string; type: OutputType }>;
  /** Cells are ISO-8601 strings (time), numbers, strings or null. */
  rows: Array<Array<string | number | null>>;
  meta: { target: string; rowCount: number; limit: number };
}

export interface QueryServiceOptions {
  /** A query on the ORM path running longer is cancelled: 422 QUERY_TIMEOUT (the reader sets its own). */
  statementTimeoutMs: number;
  /** The evaluator refuses to hold more raw points than this: 422 QUERY_TOO_LARGE. */
  maxEvaluatedPoints: number;
  /**
   * Runs the SQL path on connections of its own, one round trip a statement (query.sql-reader.ts);
   * without it, statements run in a transaction of the ORM's connection.
   */
  reader?: Pick<TimeSeriesSqlReader, 'select'>;
}

const DEFAULTS: QueryServiceOptions = {
  statementTimeoutMs: QUERY_STATEMENT_TIMEOUT_MS,
  maxEvaluatedPoints: 2_000_000,
};
/** Name reported in `meta.target` when no store is wired and the query ran on the ORM's database. */
export const LOCAL_POSTGRES = 'postgres';

/**
 * Runs time-series queries. The caller has `timeseries.read`; the account is checked here and
 * enforced inside the SQL, as are the caller's permission scopes (the twins' effective scopes).
 * When the serving target is PostgreSQL (or no store is given) the query runs as one SQL
 * statement; otherwise the states are resolved in PostgreSQL and the raw points of the serving
 * target are evaluated in memory with the same semantics.
 */
export class TimeSeriesQueryService {
  private readonly options: QueryServiceOptions;

  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly clock: () => Date,
    private readonly reads: TimeSeriesReads | null = null,
    options: Partial<QueryServiceOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  async run(principal: Principal, input: TimeSeriesQueryInput): Promise<TimeSeriesQueryResult> {
    const accountId = await this.accounts.actingAccountId(principal, input.accountId);
    const scopes = scopeFilter(principal);
    return this.runIn(
      {
        accountId,
        includeSubAccounts: input.includeSubAccounts ?? false,
        // Twins outside the caller's permission scopes are filtered in the twins CTE of both paths.
        permissionScopeIds: scopes.restricted ? scopes.scopeIds : null,
      },
      input.query,
    );
  }

  /**
   * Runs `query` within `tenancy`, which the caller has decided (`run` from a principal; a public
   * dashboard for its own account, having checked the query names only states it publishes).
   */
  async runIn(tenancy: Tenancy, query: string): Promise<TimeSeriesQueryResult> {
    const plan = planQuery(query, this.clock());
    const target = this.reads ? await this.reads.servingTarget() : null;
    let servedBy = target?.name ?? LOCAL_POSTGRES;
    const reads = this.reads!;
    const rows =
      !target || target.kind === 'postgres'
        ? await this.runSql(plan, tenancy)
        : await this.runInMemory(plan, tenancy, {
            // The serving target can fail mid-read (down since its last health check) and the store
            // answer from the next one: `meta.target` names the one that answered.
            readPoints: async (filter) => {
              if (!reads.readPointsWithSource) return reads.readPoints(filter);
              const read = await reads.readPointsWithSource(filter);
              servedBy = read.target;
              return read.points;
            },
          });
    return {
      columns: plan.columns.map((c) => ({ name: c.name, type: c.type })),
      rows: rows.map((row) => row.map((cell, i) => toJsonCell(cell, plan.columns[i]!.type))),
      meta: { target: servedBy, rowCount: rows.length, limit: plan.limit },
    };
  }

  /** The SQL path: one read-only statement under a statement timeout, on hourly rollups where they answer. */
  async runSql(plan: Plan, tenancy: Tenancy): Promise<Cell[][]> {
    const rows = await this.select(compilePostgresSql(plan, tenancy));
    const names = plan.columns.map((_c, i) => `c${i}`);
    return rows.map((row) => plan.columns.map((c, i) => fromSql(row[names[i]!], c.type)));
  }

  /**
   * The evaluator path over any point reader: the store (which fails over between targets) or,
   * in tests comparing both paths, the PostgreSQL target itself.
   */
  async runInMemory(
    plan: Plan,
    tenancy: Tenancy,
    target: Pick<TimeSeriesTarget, 'readPoints'>,
  ): Promise<Cell[][]> {
    const states = await this.resolveStates(plan, tenancy);
    const range = timeRange(plan.filter);
    if (states.size === 0 || range.from >= range.to) return evaluatePlan(plan, states, []);
    const max = this.options.maxEvaluatedPoints;
    const points = await target.readPoints({
      stateIds: [...states.keys()],
      from: new Date(range.from),
      to: new Date(range.to),
      limit: max + 1,
    });
    if (points.length > max)
      throw new AppError(
        'QUERY_TOO_LARGE',
        422,
        `The query would read more than ${max} points; narrow the time range`,
      );
    return evaluatePlan(plan, states, points);
  }

  private async resolveStates(plan: Plan, tenancy: Tenancy): Promise<Map<string, StateRow>> {
    const rows = await this.select(compileStatesSql(stateLevelFilter(plan.filter), tenancy));
    return new Map(
      rows.map((r) => [
        String(r.state_id),
        {
          stateId: String(r.state_id),
          stateKey: String(r.state_key),
          stateTitle: String(r.state_title),
          stateUnit: (r.state_unit as string | null) ?? null,
          twinId: String(r.twin_id),
          twinTitle: String(r.twin_title),
          twinReferenceId: (r.twin_reference_id as string | null) ?? null,
          twinHierarchy: (r.twin_hierarchy as string | null) ?? '',
          twinPath: (r.twin_path as string[] | null) ?? [],
          twinTags: (r.twin_tags as string[] | null) ?? [],
          twinProperties: (r.twin_properties as Record<string, unknown> | null) ?? {},
        },
      ]),
    );
  }

  private async select(statement: CompiledSql): Promise<Array<Record<string, unknown>>> {
    try {
      if (this.options.reader) return await this.options.reader.select(statement);
      return await this.em().transactional(async (em) => {
        const connection = em.getConnection();
        const tx: unknown = em.getTransactionContext();
        // Defence in depth: even a compiler bug could neither write nor run for long. One round
        // trip for both (the same as SET TRANSACTION READ ONLY and SET LOCAL statement_timeout).
        await connection.execute(
          "SELECT set_config('transaction_read_only', 'on', true), set_config('statement_timeout', ?, true)",
          [String(this.options.statementTimeoutMs)],
          'all',
          tx,
        );
        return connection.execute<Array<Record<string, unknown>>>(statement.sql, statement.params, 'all', tx);
      });
    } catch (error) {
      if ((error as { code?: string }).code === '57014')
        throw new AppError('QUERY_TIMEOUT', 422, 'The query ran too long and was cancelled; narrow it down');
      throw error;
    }
  }
}

/**
 * Both SQL paths hand timestamptz over as text (`2026-01-01 00:00:00+00`), kept as the ISO text the
 * reply carries (no Date in between), and bigint counts as strings.
 */
function fromSql(value: unknown, type: OutputType): Cell {
  if (value === null || value === undefined) return null;
  if (type === 'time' && typeof value === 'string') return pgTimestamptzToIso(value);
  if (type === 'number' && typeof value === 'string') return Number(value);
  return value as Cell;
}

function toJsonCell(cell: Cell, type: OutputType): string | number | null {
  if (cell === null || cell === undefined) return null;
  if (cell instanceof Date) return cell.toISOString();
  // count() arrives from PostgreSQL as a bigint string.
  if (type === 'number' && typeof cell === 'string') return Number(cell);
  return cell;
}
