import type {
  AggregateExpr,
  Condition,
  Literal,
  Query,
  SelectExpr,
  SelectItem,
  ValueExpr,
} from './query.ast.js';
import { COLUMNS } from './query.columns.js';
import { queryInvalid } from './query.errors.js';
import { parseQuery } from './query.parser.js';
import {
  aggId,
  aggregateType,
  keyId,
  type Filter,
  type KeyExpr,
  type LiteralValue,
  type Operand,
  type OutputType,
  type Plan,
  type PlanColumn,
  type PlanSort,
  type ValueSource,
} from './query.plan.js';
import { isKnownTimeZone, parseIsoTime } from './query.time.js';

export const DEFAULT_LIMIT = 1000;
export const MAX_LIMIT = 100_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What `SELECT *` means: every point with where it belongs. */
const STAR: SelectExpr[] = (
  ['time', 'twin.id', 'twin.title', 'state.id', 'state.key', 'value', 'text'] as const
).map((name) => ({ kind: 'column', name, pos: 0 }));

/** Parses and checks a query; `now` is the instant every `now()` in it stands for. */
export function planQuery(text: string, now: Date): Plan {
  return analyzeQuery(text, parseQuery(text), now);
}

/** Checks meaning (types, grouping, aliases, limits) and resolves literals; QUERY_INVALID otherwise. */
export function analyzeQuery(text: string, query: Query, now: Date): Plan {
  const invalid = (pos: number, message: string) => queryInvalid(text, pos, message);
  const items: SelectItem[] =
    query.select === 'star'
      ? STAR.map((expr) => ({ expr: { ...expr, pos: query.selectPos }, alias: null, pos: query.selectPos }))
      : query.select;
  const hasAggregate = items.some((i) => i.expr.kind === 'aggregate');
  const aggregated = hasAggregate || query.groupBy !== null;
  if (query.select === 'star' && aggregated)
    throw invalid(query.selectPos, 'SELECT * cannot be grouped; name the columns');

  const keys: KeyExpr[] = [];
  const keyIndex = (expr: ValueExpr): number => {
    checkValueExpr(expr, invalid);
    const key = stripPos(expr);
    const found = keys.findIndex((k) => keyId(k) === keyId(key));
    if (found >= 0) return found;
    keys.push(key);
    return keys.length - 1;
  };

  // Group keys first, so in an aggregated plan `keys` is exactly the GROUP BY list.
  const sourceOf = (expr: SelectExpr): ValueSource => {
    if (expr.kind === 'aggregate') return { kind: 'agg', agg: checkAggregate(expr, invalid) };
    if (aggregated && query.groupBy && !keys.some((k) => keyId(k) === keyId(stripPos(expr))))
      throw invalid(expr.pos, 'A column selected next to aggregates must be in GROUP BY');
    return { kind: 'key', index: keyIndex(expr) };
  };
  if (query.groupBy) {
    for (const group of query.groupBy) {
      if (group.expr.kind !== 'alias') {
        keyIndex(group.expr);
        continue;
      }
      const aliasName = group.expr.name;
      const aliased = items.find((i) => i.alias === aliasName)!;
      if (aliased.expr.kind === 'aggregate') throw invalid(group.pos, 'Cannot group by an aggregate');
      keyIndex(aliased.expr);
    }
  }

  const columns: PlanColumn[] = [];
  for (const item of items) {
    const source = sourceOf(item.expr);
    const name = item.alias ?? defaultName(item.expr);
    if (columns.some((c) => c.name === name))
      throw invalid(item.pos, `Column name "${name}" is used twice; rename one with AS`);
    columns.push({ name, type: typeOf(item.expr), source });
  }

  const sort: PlanSort[] = [];
  for (const order of query.orderBy ?? []) {
    let expr: SelectExpr;
    if (order.expr.kind === 'alias') {
      const name = order.expr.name;
      expr = items.find((i) => i.alias === name)!.expr;
    } else expr = order.expr;
    let source: ValueSource;
    if (expr.kind === 'aggregate') {
      if (!aggregated) throw invalid(order.pos, 'Ordering by an aggregate needs an aggregating query');
      source = { kind: 'agg', agg: checkAggregate(expr, invalid) };
    } else if (aggregated) {
      const index = keys.findIndex((k) => keyId(k) === keyId(stripPos(expr)));
      if (index < 0)
        throw invalid(order.pos, 'An aggregating query can only be ordered by its groups or aggregates');
      source = { kind: 'key', index };
    } else source = { kind: 'key', index: keyIndex(expr) };
    sort.push({ source, direction: order.direction, type: typeOf(expr) });
  }
  // Tie-breakers: groups are unique by their keys; points by time and state (then value and text).
  if (aggregated) {
    keys.forEach((k, index) => {
      if (!sort.some((s) => s.source.kind === 'key' && s.source.index === index))
        sort.push({ source: { kind: 'key', index }, direction: 'asc', type: keyType(k) });
    });
  }
  if (!aggregated) {
    sort.push({ source: { kind: 'point', field: 'time' }, direction: 'asc', type: 'time' });
    sort.push({ source: { kind: 'point', field: 'stateId' }, direction: 'asc', type: 'string' });
    sort.push({ source: { kind: 'point', field: 'value' }, direction: 'asc', type: 'number' });
    sort.push({ source: { kind: 'point', field: 'text' }, direction: 'asc', type: 'string' });
  }

  const limit = query.limit?.value ?? DEFAULT_LIMIT;
  if (limit < 1 || limit > MAX_LIMIT)
    throw invalid(query.limit!.pos, `LIMIT must be between 1 and ${MAX_LIMIT}`);
  const filter = query.where ? resolveCondition(query.where, now, invalid) : null;
  const usesHierarchy =
    keys.some((k) => k.kind === 'column' && k.name === 'twin.hierarchy') ||
    (filter !== null && filterUses(filter, 'twin.hierarchy'));
  return { columns, aggregated, keys, filter, sort, limit, usesHierarchy };
}

type Invalid = (pos: number, message: string) => Error;

function filterUses(filter: Filter, column: string): boolean {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return filter.items.some((f) => filterUses(f, column));
    case 'not':
      return filterUses(filter.operand, column);
    case 'compare':
    case 'in':
    case 'like':
    case 'isNull':
      return filter.target.kind === 'column' && filter.target.name === column;
    default:
      return false;
  }
}

function stripPos(expr: ValueExpr): KeyExpr {
  if (expr.kind === 'bucket') return { kind: 'bucket', width: expr.width, timeZone: expr.timeZone };
  return expr.kind === 'property'
    ? { kind: 'property', name: expr.name }
    : { kind: 'column', name: expr.name };
}

function checkValueExpr(expr: ValueExpr, invalid: Invalid): void {
  if (expr.kind === 'bucket' && expr.timeZone !== null && !isKnownTimeZone(expr.timeZone))
    throw invalid(expr.pos, `Unknown time zone "${expr.timeZone}" (use an IANA name such as Europe/Berlin)`);
}

function checkAggregate(expr: AggregateExpr, invalid: Invalid) {
  if (expr.arg === 'text' && !['count', 'first', 'last'].includes(expr.fn))
    throw invalid(expr.pos, `${expr.fn}() takes value; only count, first and last take text`);
  return { fn: expr.fn, arg: expr.arg };
}

const keyType = (key: KeyExpr): OutputType =>
  key.kind === 'bucket' ? 'time' : key.kind === 'property' ? 'string' : outputType(COLUMNS[key.name].type);

const outputType = (type: string): OutputType => (type === 'uuid' ? 'string' : (type as OutputType));

const typeOf = (expr: SelectExpr): OutputType =>
  expr.kind === 'aggregate' ? aggregateType(expr) : keyType(stripPos(expr));

function defaultName(expr: SelectExpr): string {
  if (expr.kind === 'aggregate') return aggId(expr);
  if (expr.kind === 'bucket') return 'bucket';
  return expr.kind === 'property' ? `property.${expr.name}` : expr.name;
}

function resolveCondition(condition: Condition, now: Date, invalid: Invalid): Filter {
  const recurse = (c: Condition) => resolveCondition(c, now, invalid);
  switch (condition.kind) {
    case 'and':
    case 'or':
      return { kind: condition.kind, items: [recurse(condition.left), recurse(condition.right)] };
    case 'not':
      return { kind: 'not', operand: recurse(condition.operand) };
    case 'under':
      if (!UUID.test(condition.twinId.value))
        throw invalid(condition.twinId.pos, 'UNDER takes a twin id (UUID)');
      return { kind: 'under', twinId: condition.twinId.value.toLowerCase() };
    case 'hasTag':
      return { kind: 'hasTag', tag: condition.tag.value };
    case 'isNull':
      return { kind: 'isNull', target: operandOf(condition.target) };
    case 'like': {
      const target = operandOf(condition.target);
      if (typeOfOperand(target) !== 'string') throw invalid(condition.pos, 'LIKE works on text columns only');
      // PostgreSQL refuses a pattern ending in a lone escape character; say so before it does.
      if (/(^|[^\\])(\\\\)*\\$/.test(condition.pattern.value))
        throw invalid(condition.pattern.pos, 'A LIKE pattern cannot end with the escape character \\');
      return {
        kind: 'like',
        target,
        pattern: condition.pattern.value,
        caseInsensitive: condition.caseInsensitive,
      };
    }
    case 'in': {
      const target = operandOf(condition.target);
      if (typeOfOperand(target) === 'time')
        throw invalid(condition.pos, 'Compare time with <, <=, >, >= or BETWEEN');
      return { kind: 'in', target, values: condition.values.map((v) => literalFor(target, v, now, invalid)) };
    }
    case 'compare': {
      const target = operandOf(condition.target);
      const type = typeOfOperand(target);
      if ((type === 'string' || type === 'uuid') && !['=', '!='].includes(condition.op))
        throw invalid(condition.pos, 'Text and ids compare with =, != , IN or LIKE only');
      return {
        kind: 'compare',
        target,
        op: condition.op,
        value: literalFor(target, condition.value, now, invalid),
      };
    }
  }
}

const operandOf = (target: { kind: 'column' | 'property'; name: string }): Operand =>
  target.kind === 'property'
    ? { kind: 'property', name: target.name }
    : ({ kind: 'column', name: target.name } as Operand);

const typeOfOperand = (operand: Operand) =>
  operand.kind === 'property' ? 'string' : COLUMNS[operand.name].type;

/** The literal as the value bound for this operand, or QUERY_INVALID when its type does not fit. */
function literalFor(target: Operand, literal: Literal, now: Date, invalid: Invalid): LiteralValue {
  const type = typeOfOperand(target);
  const name = target.kind === 'property' ? `property.${target.name}` : target.name;
  if (type === 'time') {
    if (literal.kind === 'number') throw invalid(literal.pos, 'time compares with a timestamp or now()');
    const base =
      literal.kind === 'string'
        ? parseIsoTime(literal.value)
        : literal.base.type === 'now'
          ? now
          : parseIsoTime(literal.base.text);
    if (!base) throw invalid(literal.pos, 'Not an ISO-8601 timestamp (e.g. 2026-01-31T12:00:00Z)');
    const ms = base.getTime() + (literal.kind === 'time' ? literal.offsetMs : 0);
    if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) throw invalid(literal.pos, 'Time out of range');
    return new Date(ms);
  }
  if (literal.kind === 'time') throw invalid(literal.pos, `Only time compares with a time, not ${name}`);
  if (type === 'number') {
    if (literal.kind !== 'number') throw invalid(literal.pos, `${name} compares with a number`);
    return literal.value;
  }
  if (literal.kind !== 'string') throw invalid(literal.pos, `${name} compares with quoted text`);
  if (type === 'uuid' && !UUID.test(literal.value)) throw invalid(literal.pos, `${name} is a UUID`);
  return type === 'uuid' ? literal.value.toLowerCase() : literal.value;
}
