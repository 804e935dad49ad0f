import {
  accountCondition,
  compileSql,
  filterSql,
  keySql,
  Params,
  sortSql,
  sourceSql,
  twinsCte,
  type CompiledSql,
  type Tenancy,
} from './query.compile-sql.js';
import type { Aggregate, Filter, Plan } from './query.plan.js';
import { rollupWindow, type RollupWindow } from './query.rollup.js';
import { stateLevelFilter } from './query.split.js';

/**
 * The PostgreSQL statement for a plan: with hourly rollups where query.rollup.ts finds whole hours
 * they answer, else the statement over points alone (query.compile-sql.ts).
 *
 * With rollups, four inputs become rows of partial aggregates per state and key: the points before
 * the window, the points after it or after the fold watermark (two branches, so each is an index
 * range scan), the points of hours marked for a re-fold, and the other rollup hours inside the
 * window below the watermark. One statement, so the watermark, marks and rollups are of one snapshot.
 * The outer select combines them per group: counts and sums add, mean is the sum over the count of values (what avg() computes), min/max of the partial ones, first/last the
 * partial first/last with the earliest/latest time (ties: state id, then value, as on points).
 */
export function compilePostgresSql(plan: Plan, tenancy: Tenancy): CompiledSql {
  const window = rollupWindow(plan);
  return window ? compileRollupSql(plan, tenancy, window) : compileSql(plan, tenancy);
}

const POINT_PARTS =
  'p.state_id AS sid, 1::bigint AS nr, (p.value IS NOT NULL)::int::bigint AS nv, p.value AS vs, ' +
  'p.value AS vmin, p.value AS vmax, CASE WHEN p.value IS NOT NULL THEN p.time END AS ft, p.value AS fv, ' +
  'CASE WHEN p.value IS NOT NULL THEN p.time END AS lt, p.value AS lv';
const ROLLUP_PARTS =
  'r.state_id AS sid, r.n_rows AS nr, r.n_values AS nv, r.v_sum AS vs, r.v_min AS vmin, r.v_max AS vmax, ' +
  'r.first_time AS ft, r.first_value AS fv, r.last_time AS lt, r.last_value AS lv';

export function compileRollupSql(plan: Plan, tenancy: Tenancy, window: RollupWindow): CompiledSql {
  const params = new Params();
  // Bound in text order: knex `?` placeholders are positional.
  const twins = twinsCte(params, tenancy, plan.usesHierarchy);
  const from = () => `${params.bind(new Date(window.from))}::timestamptz`;
  // Whole hours end at the fold watermark: later hours come from the points.
  const rolledTo = () => `least(${params.bind(new Date(window.to))}::timestamptz, (SELECT b FROM wm))`;
  const pointKeys = () => plan.keys.map((k, i) => `, ${keySql(k, params)} AS k${i}`).join('');
  // Bounds are bound last, where they stand in the text.
  const pointsWhere = (bound: () => string) => {
    const where = [accountCondition('s.account_id', params, tenancy)];
    if (plan.filter) where.push(filterSql(plan.filter, params));
    where.push(bound());
    return where.join(' AND ');
  };
  const pointsBranch = (bound: () => string) =>
    `SELECT ${POINT_PARTS}${pointKeys()} FROM ts_points p JOIN data_states s ON s.id = p.state_id ` +
    `JOIN tw ON tw.id = s.twin_id WHERE ${pointsWhere(bound)}`;
  const before = pointsBranch(() => `p.time < ${from()}`);
  const after = pointsBranch(() => `p.time >= greatest(${from()}, ${rolledTo()})`);
  // Hours marked for a re-fold (late points) inside the rolled-up span: their points, not their rollups.
  const marked =
    `SELECT ${POINT_PARTS}${pointKeys()} FROM ts_rollup_dirty d JOIN ts_points p ON p.state_id = d.state_id ` +
    `AND p.time >= d.hour AND p.time < d.hour + interval '1 hour' JOIN data_states s ON s.id = p.state_id ` +
    `JOIN tw ON tw.id = s.twin_id WHERE ${pointsWhere(() => `d.hour >= ${from()} AND d.hour < ${rolledTo()}`)}`;
  const keys = plan.keys.map((k, i) => `, ${keySql(k, params, 'r.hour')} AS k${i}`).join('');
  const where = [accountCondition('s.account_id', params, tenancy)];
  const stateFilter = stateLevelFilter(plan.filter);
  if (stateFilter) where.push(filterSql(stateFilter, params));
  where.push(`r.hour >= ${from()}`, `r.hour < ${rolledTo()}`);
  where.push(
    'NOT EXISTS (SELECT 1 FROM ts_rollup_dirty d WHERE d.state_id = r.state_id AND d.hour = r.hour)',
  );
  const hours =
    `SELECT ${ROLLUP_PARTS}${keys} FROM ts_rollup_hourly r JOIN data_states s ON s.id = r.state_id ` +
    `JOIN tw ON tw.id = s.twin_id WHERE ${where.join(' AND ')}`;
  const outputs = plan.columns.map((c, i) => `${sourceSql(c.source, combinedSql)} AS c${i}`);
  const groupBy = plan.keys.length ? ` GROUP BY ${plan.keys.map((_k, i) => `q.k${i}`).join(', ')}` : '';
  const orderBy = plan.sort.length
    ? ` ORDER BY ${plan.sort.map((s) => sortSql(s, plan, combinedSql)).join(', ')}`
    : '';
  const branches = [before, after, marked, hours].join(' UNION ALL ');
  const sql =
    `WITH tw AS NOT MATERIALIZED (${twins}), wm AS (SELECT folded_before AS b FROM ts_rollup_fold) ` +
    `SELECT ${outputs.join(', ')} FROM (${branches}) q${groupBy}${orderBy} LIMIT ${params.bind(plan.limit)}`;
  return { sql, params: params.values, genericPlan: pinsStates(stateFilter) };
}

/**
 * Whether the state conditions name the states by id (a chart's `state.id = …`): then every
 * branch starts from those few states through their keys, whatever the bounds bound, and a
 * cached generic plan is as good as one made per call. Other filters (tags, title patterns) may
 * match one state or ten thousand, and get a plan for their values.
 */
function pinsStates(filter: Filter | null): boolean {
  if (!filter) return false;
  if (filter.kind === 'and') return filter.items.some(pinsStates);
  const byId = (filter.kind === 'compare' && filter.op === '=') || filter.kind === 'in';
  return byId && filter.target.kind === 'column' && filter.target.name === 'state.id';
}

/** An aggregate over partial aggregates (the columns of POINT_PARTS and ROLLUP_PARTS). */
function combinedSql(agg: Aggregate): string {
  switch (agg.fn) {
    case 'count':
      // A group of no rows (aggregates without GROUP BY) counts 0, as count() does.
      return agg.arg === '*' ? 'coalesce(sum(q.nr), 0)' : 'coalesce(sum(q.nv), 0)';
    case 'sum':
      return 'sum(q.vs)';
    case 'mean':
      return 'sum(q.vs) / nullif(sum(q.nv), 0)::float8';
    case 'min':
      return 'min(q.vmin)';
    case 'max':
      return 'max(q.vmax)';
    case 'first':
      return '(array_agg(q.fv ORDER BY q.ft ASC, q.sid ASC, q.fv ASC) FILTER (WHERE q.fv IS NOT NULL))[1]';
    case 'last':
      return '(array_agg(q.lv ORDER BY q.lt DESC, q.sid DESC, q.lv DESC) FILTER (WHERE q.lv IS NOT NULL))[1]';
  }
}
