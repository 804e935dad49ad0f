import type { EntityManager } from '@mikro-orm/postgresql';
import { errors } from '../platform/errors.js';
import type { TimeSeriesQueryService } from '../timeseries/query/query.service.js';
import type { Dashboard } from './dashboard.entity.js';
import { publishedIds } from './public-dashboard.view.js';

/** The line-chart ranges (dashboard-layout.ts); longer ones ask for means per bucket, as the console does. */
export const HISTORY_RANGES = ['1h', '6h', '24h', '7d', '30d'] as const;
export type HistoryRange = (typeof HISTORY_RANGES)[number];
const BUCKETS: Partial<Record<HistoryRange, string>> = { '7d': '15m', '30d': '1h' };
const POINT_LIMIT = 5000;

/**
 * A published state's history for a public line chart: the query text is made here from a state
 * id the dashboard publishes (a validated UUID) and a fixed range, never taken from the viewer, and
 * runs in the dashboard's own account without scope restriction (as its publisher saw it).
 */
export async function publicHistory(
  em: EntityManager,
  queries: TimeSeriesQueryService,
  dashboard: Dashboard,
  stateId: string,
  range: HistoryRange,
): Promise<Array<{ time: string; value: number | null }>> {
  const { states } = await publishedIds(em, dashboard);
  if (!states.has(stateId)) throw errors.notFound('State of this dashboard', stateId);
  const bucket = BUCKETS[range];
  const where = `state.id = '${stateId}' AND time >= now() - ${range}`;
  const query = bucket
    ? `SELECT bucket(${bucket}) AS t, mean(value) AS v WHERE ${where} GROUP BY t ORDER BY t LIMIT ${POINT_LIMIT}`
    : `SELECT time, value WHERE ${where} ORDER BY time LIMIT ${POINT_LIMIT}`;
  const result = await queries.runIn({ accountId: dashboard.account.id, includeSubAccounts: false }, query);
  return result.rows
    .filter((row) => typeof row[0] === 'string')
    .map(([time, value]) => ({ time: String(time), value: typeof value === 'number' ? value : null }));
}
