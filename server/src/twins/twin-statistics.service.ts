import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { AccountService } from '../accounts/account.service.js';
import { visibleTwinSql } from './twin-scopes.js';

export interface TwinStatisticsQuery {
  accountId?: string;
  sampleSize?: number;
  includeSubAccounts?: boolean;
}

const DEFAULT_SAMPLE_SIZE = 10;

/**
 * Figures about the twins of an account (optionally with its sub-accounts) and a sample of them.
 * The sample is the `sampleSize` most recently changed twins (updatedAt descending, then id):
 * deterministic, so two calls agree, and the twins a person is working on come first.
 * Callers have checked digitalTwin.read; the account must be reachable, and only twins the
 * caller's permission scopes show (and their states) are counted or sampled.
 */
export class TwinStatisticsService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
  ) {}

  async statistics(principal: Principal, query: TwinStatisticsQuery) {
    const account = await this.accounts.actingAccount(principal, query.accountId);
    const includeSubAccounts = query.includeSubAccounts ?? false;
    const sampleSize = query.sampleSize ?? DEFAULT_SAMPLE_SIZE;
    // Sub-accounts: every account whose path passes through this one (the account included).
    const accounts = (alias: string) =>
      includeSubAccounts
        ? {
            sql: `${alias}.account_id IN (SELECT a.id FROM accounts a WHERE ?::uuid = ANY(a.path))`,
            params: [account.id],
          }
        : { sql: `${alias}.account_id = ?`, params: [account.id] };
    const visible = visibleTwinSql(principal, 't');
    const twins = { sql: `${accounts('t').sql} AND ${visible.sql}`, params: [account.id, ...visible.params] };
    // States count when their twin is visible; unrestricted callers skip the subquery.
    const states =
      visible.sql === 'TRUE'
        ? accounts('s')
        : {
            sql: `${accounts('s').sql} AND s.twin_id IN (SELECT t.id FROM digital_twins t WHERE ${visible.sql})`,
            params: [account.id, ...visible.params],
          };
    const em = this.em();
    const [twinRows, stateRows, sample] = await Promise.all([
      em.execute<Array<{ status: string; n: string; located: string; with_dashboard: string }>>(
        `SELECT status, count(*) AS n,
                count(*) FILTER (WHERE latitude IS NOT NULL AND longitude IS NOT NULL) AS located,
                count(*) FILTER (WHERE dashboard_id IS NOT NULL) AS with_dashboard
           FROM digital_twins t WHERE ${twins.sql} GROUP BY status ORDER BY status`,
        twins.params,
      ),
      em.execute<Array<{ n: string; warned: string }>>(
        `SELECT count(*) AS n, count(*) FILTER (WHERE warning IS NOT NULL) AS warned
           FROM data_states s WHERE ${states.sql}`,
        states.params,
      ),
      sampleSize === 0
        ? Promise.resolve([])
        : em.execute<Array<Record<string, unknown>>>(
            `SELECT t.id, t.account_id, t.title, t.status, t.latitude, t.longitude, t.updated_at,
                    (SELECT count(*) FROM data_states s WHERE s.twin_id = t.id) AS state_count,
                    (SELECT count(*) FROM data_states s WHERE s.twin_id = t.id AND s.warning IS NOT NULL) AS warning_count
               FROM digital_twins t WHERE ${twins.sql}
              ORDER BY t.updated_at DESC, t.id DESC LIMIT ?`,
            [...twins.params, sampleSize],
          ),
    ]);
    const sum = (field: 'n' | 'located' | 'with_dashboard') =>
      twinRows.reduce((total, r) => total + Number(r[field]), 0);
    return {
      accountId: account.id,
      includeSubAccounts,
      twins: sum('n'),
      twinsByStatus: {
        active: 0,
        inactive: 0,
        ...Object.fromEntries(twinRows.map((r) => [r.status, Number(r.n)])),
      },
      twinsWithLocation: sum('located'),
      twinsWithDashboard: sum('with_dashboard'),
      states: Number(stateRows[0]?.n ?? 0),
      statesWithWarnings: Number(stateRows[0]?.warned ?? 0),
      sampleSize,
      sample: sample.map((r) => ({
        id: r.id as string,
        accountId: r.account_id as string,
        title: r.title as string,
        status: r.status as string,
        latitude: (r.latitude as number | null) ?? null,
        longitude: (r.longitude as number | null) ?? null,
        stateCount: Number(r.state_count),
        warningCount: Number(r.warning_count),
        updatedAt: new Date(r.updated_at as string).toISOString(),
      })),
    };
  }
}
