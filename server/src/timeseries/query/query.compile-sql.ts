import { COLUMNS, HIERARCHY_SEPARATOR, PROPERTY_SQL } from './query.columns.js';
import type { Aggregate, Filter, KeyExpr, Operand, Plan, PlanSort, ValueSource } from './query.plan.js';
import { BUCKET_ORIGIN_LOCAL, BUCKET_ORIGIN_UTC, intervalText } from './query.time.js';

/**
 * Compiles a checked plan to one parameterised PostgreSQL statement (knex `?` placeholders).
 * SQL text comes only from fixed fragments in this file and query.columns.ts; every value from
 * the query (literals, property names, time zones, durations) is a bind parameter.
 *
 * Shape: a twins CTE limited to the caller's accounts and permission scopes, an inner select of point rows with the
 * per-point keys (k0…), and an outer select that groups, orders and limits by those names, so a
 * parameterised expression such as a bucket is written once and grouped by name.
 */

/** The accounts a query may read: one account, or it and every account below it. */
export interface Tenancy {
  accountId: string;
  includeSubAccounts: boolean;
  /**
   * The caller's permission scopes: only twins whose effective scope is one of them (and their
   * states) are read. Null or absent: no restriction (docs/permission-scopes.md).
   */
  permissionScopeIds?: readonly string[] | null;
}

export interface CompiledSql {
  sql: string;
  params: unknown[];
  /**
   * The statement's best plan does not depend on the values bound: a plan made once and cached
   * serves every call (query.sql-reader.ts). True for the rollup statement of states named by id.
   */
  genericPlan?: boolean;
}

export class Params {
  readonly values: unknown[] = [];
  bind(value: unknown): string {
    this.values.push(value);
    return '?';
  }
}

const SORT_TIE = { time: 'q.pt', stateId: 'q.sid', value: 'q.pv', text: 'q.px COLLATE "C"' } as const;

export function compileSql(plan: Plan, tenancy: Tenancy): CompiledSql {
  const params = new Params();
  const twins = twinsCte(params, tenancy, plan.usesHierarchy);
  const keys = plan.keys.map((k, i) => `${keySql(k, params)} AS k${i}`);
  const where = [accountCondition('s.account_id', params, tenancy)];
  if (plan.filter) where.push(filterSql(plan.filter, params));
  const inner =
    `SELECT p.time AS pt, p.value AS pv, p.text AS px, p.state_id AS sid${keys.map((k) => `, ${k}`).join('')} ` +
    `FROM ts_points p JOIN data_states s ON s.id = p.state_id JOIN tw ON tw.id = s.twin_id ` +
    `WHERE ${where.join(' AND ')}`;
  const outputs = plan.columns.map((c, i) => `${sourceSql(c.source)} AS c${i}`);
  const groupBy =
    plan.aggregated && plan.keys.length ? ` GROUP BY ${plan.keys.map((_k, i) => `q.k${i}`).join(', ')}` : '';
  const orderBy = plan.sort.length ? ` ORDER BY ${plan.sort.map((s) => sortSql(s, plan)).join(', ')}` : '';
  const sql =
    `WITH tw AS NOT MATERIALIZED (${twins}) SELECT ${outputs.join(', ')} FROM (${inner}) q${groupBy}${orderBy}` +
    ` LIMIT ${params.bind(plan.limit)}`;
  return { sql, params: params.values };
}

/**
 * The states a query can touch with their twin and state columns, for the in-memory evaluator.
 * `filter` is already reduced to state-level conditions (see stateLevelFilter).
 */
export function compileStatesSql(filter: Filter | null, tenancy: Tenancy): CompiledSql {
  const params = new Params();
  const twins = twinsCte(params, tenancy, true);
  const where = [accountCondition('s.account_id', params, tenancy)];
  if (filter) where.push(filterSql(filter, params));
  const sql =
    `WITH tw AS NOT MATERIALIZED (${twins}) SELECT s.id AS state_id, s.key AS state_key, s.title AS state_title, ` +
    `s.unit AS state_unit, tw.id AS twin_id, tw.title AS twin_title, tw.reference_id AS twin_reference_id, ` +
    `tw.hierarchy AS twin_hierarchy, tw.path AS twin_path, tw.tags AS twin_tags, ` +
    `tw.custom_properties AS twin_properties FROM data_states s JOIN tw ON tw.id = s.twin_id ` +
    `WHERE ${where.join(' AND ')} ORDER BY s.id`;
  return { sql, params: params.values };
}

export function twinsCte(params: Params, tenancy: Tenancy, withHierarchy: boolean): string {
  // Ancestors outside the twin's account or the caller's scopes are left out of the title path rather than disclosed.
  const hierarchy = withHierarchy
    ? `, (SELECT string_agg(a.title, '${HIERARCHY_SEPARATOR}' ORDER BY x.ord) FROM unnest(t.path) WITH ORDINALITY AS x(id, ord) ` +
      `JOIN digital_twins a ON a.id = x.id AND a.account_id = t.account_id` +
      `${scopeCondition('a', params, tenancy, ' AND ')}) AS hierarchy`
    : '';
  return (
    `SELECT t.id, t.title, t.reference_id, t.custom_properties, t.tags, t.path${hierarchy} ` +
    `FROM digital_twins t WHERE ${accountCondition('t.account_id', params, tenancy)}` +
    scopeCondition('t', params, tenancy, ' AND ')
  );
}

/** `<prefix>` and the permission-scope condition on twin alias `alias`; empty when unrestricted. */
function scopeCondition(alias: string, params: Params, tenancy: Tenancy, prefix: string): string {
  const ids = tenancy.permissionScopeIds;
  if (ids === null || ids === undefined) return '';
  // knex expands an array binding into a value list, hence `IN (?)`; no scopes: nothing is visible.
  return ids.length
    ? `${prefix}${alias}.effective_permission_scope_id IN (${params.bind([...ids])})`
    : `${prefix}FALSE`;
}

export function accountCondition(column: string, params: Params, tenancy: Tenancy): string {
  return tenancy.includeSubAccounts
    ? `${column} IN (SELECT acc.id FROM accounts acc WHERE ${params.bind(tenancy.accountId)}::uuid = ANY(acc.path))`
    : `${column} = ${params.bind(tenancy.accountId)}`;
}

function operandSql(operand: Operand, params: Params): string {
  return operand.kind === 'property'
    ? PROPERTY_SQL.replace('?', params.bind(operand.name))
    : COLUMNS[operand.name].sql;
}

/** A per-point key; buckets are taken of `timeColumn` (a rollup's hour, or the point's time). */
export function keySql(key: KeyExpr, params: Params, timeColumn = 'p.time'): string {
  if (key.kind !== 'bucket') return operandSql(key, params);
  const width = params.bind(intervalText(key.width.ms));
  if (key.timeZone === null)
    return `date_bin(${width}::interval, ${timeColumn}, ${params.bind(BUCKET_ORIGIN_UTC)}::timestamptz)`;
  const zone = params.bind(key.timeZone);
  const origin = params.bind(BUCKET_ORIGIN_LOCAL);
  return `(date_bin(${width}::interval, ${timeColumn} AT TIME ZONE ${zone}, ${origin}::timestamp) AT TIME ZONE ${params.bind(key.timeZone)})`;
}

const COMPARE_SQL = { '=': '=', '!=': '<>', '<': '<', '<=': '<=', '>': '>', '>=': '>=' } as const;

export function filterSql(filter: Filter, params: Params): string {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return `(${filter.items.map((f) => filterSql(f, params)).join(filter.kind === 'and' ? ' AND ' : ' OR ')})`;
    case 'not':
      return `(NOT ${filterSql(filter.operand, params)})`;
    case 'compare':
      return `${operandSql(filter.target, params)} ${COMPARE_SQL[filter.op]} ${params.bind(filter.value)}`;
    case 'in':
      // knex expands an array binding into a value list, hence `IN (?)`.
      return `${operandSql(filter.target, params)} IN (${params.bind(filter.values)})`;
    case 'like':
      return `${operandSql(filter.target, params)} ${filter.caseInsensitive ? 'ILIKE' : 'LIKE'} ${params.bind(filter.pattern)}`;
    case 'isNull':
      return `${operandSql(filter.target, params)} IS NULL`;
    case 'under':
      return `${params.bind(filter.twinId)}::uuid = ANY(tw.path)`;
    case 'hasTag':
      return `${params.bind(filter.tag)}::text = ANY(tw.tags)`;
    case 'const':
      return filter.value ? 'TRUE' : 'FALSE';
  }
}

function aggregateSql(agg: Aggregate): string {
  const column = agg.arg === 'text' ? 'q.px' : 'q.pv';
  switch (agg.fn) {
    case 'count':
      return agg.arg === '*' ? 'count(*)' : `count(${column})`;
    case 'mean':
      return `avg(${column})`;
    case 'min':
    case 'max':
    case 'sum':
      return `${agg.fn}(${column})`;
    case 'first':
    case 'last': {
      const dir = agg.fn === 'first' ? 'ASC' : 'DESC';
      const collate = agg.arg === 'text' ? ' COLLATE "C"' : '';
      return `(array_agg(${column} ORDER BY q.pt ${dir}, q.sid ${dir}, ${column}${collate} ${dir}) FILTER (WHERE ${column} IS NOT NULL))[1]`;
    }
  }
}

export function sourceSql(source: ValueSource, aggSql: (agg: Aggregate) => string = aggregateSql): string {
  return source.kind === 'key' ? `q.k${source.index}` : aggSql(source.agg);
}

/** Text sorts by code point (`COLLATE "C"`), the order the evaluator uses too. */
export function sortSql(
  sort: PlanSort,
  plan: Plan,
  aggSql: (agg: Aggregate) => string = aggregateSql,
): string {
  const dir = sort.direction === 'desc' ? 'DESC' : 'ASC';
  if (sort.source.kind === 'point') return `${SORT_TIE[sort.source.field]} ${dir}`;
  const collatable =
    sort.type === 'string' && (sort.source.kind === 'agg' || !isUuidKey(plan.keys[sort.source.index]!));
  return `${sourceSql(sort.source, aggSql)}${collatable ? ' COLLATE "C"' : ''} ${dir}`;
}

const isUuidKey = (key: KeyExpr) => key.kind === 'column' && COLUMNS[key.name].type === 'uuid';
