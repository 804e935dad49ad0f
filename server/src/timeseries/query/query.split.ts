import { COLUMNS } from './query.columns.js';
import type { Filter } from './query.plan.js';

/**
 * Splits a filter for the in-memory evaluator: the state-level part runs in PostgreSQL to find
 * the states to read, the time part becomes the read range; the evaluator then applies the whole
 * filter to every point it read, so both parts only need to be supersets.
 */

/** Negation pushed down to the conditions (De Morgan holds in SQL's three-valued logic too). */
export function toNegationNormalForm(filter: Filter, negate = false): Filter {
  switch (filter.kind) {
    case 'not':
      return toNegationNormalForm(filter.operand, !negate);
    case 'and':
    case 'or': {
      const kind = negate ? (filter.kind === 'and' ? 'or' : 'and') : filter.kind;
      return { kind, items: filter.items.map((f) => toNegationNormalForm(f, negate)) };
    }
    case 'const':
      return { kind: 'const', value: negate ? !filter.value : filter.value };
    default:
      return negate ? { kind: 'not', operand: filter } : filter;
  }
}

const isPointLevel = (filter: Filter): boolean => {
  const atom = filter.kind === 'not' ? filter.operand : filter;
  return (
    (atom.kind === 'compare' || atom.kind === 'in' || atom.kind === 'like' || atom.kind === 'isNull') &&
    atom.target.kind === 'column' &&
    COLUMNS[atom.target.name].level === 'point'
  );
};

/**
 * The filter with every condition on point columns (time, value, text) replaced by TRUE: true
 * for every state that has a point the full filter could accept. Null when nothing is left.
 */
export function stateLevelFilter(filter: Filter | null): Filter | null {
  if (!filter) return null;
  const reduced = simplify(replacePointConditions(toNegationNormalForm(filter)));
  return reduced.kind === 'const' && reduced.value ? null : reduced;
}

function replacePointConditions(filter: Filter): Filter {
  if (filter.kind === 'and' || filter.kind === 'or')
    return { kind: filter.kind, items: filter.items.map(replacePointConditions) };
  return isPointLevel(filter) ? { kind: 'const', value: true } : filter;
}

function simplify(filter: Filter): Filter {
  if (filter.kind !== 'and' && filter.kind !== 'or') return filter;
  const absorbing = filter.kind === 'or';
  const items: Filter[] = [];
  for (const item of filter.items.map(simplify)) {
    if (item.kind === 'const') {
      if (item.value === absorbing) return item;
      continue;
    }
    items.push(item);
  }
  if (items.length === 0) return { kind: 'const', value: !absorbing };
  return items.length === 1 ? items[0]! : { kind: filter.kind, items };
}

/** Earliest and latest instants a point must lie in for the filter to accept it: [from, to). */
export interface TimeRange {
  from: number;
  to: number;
}

/** An unbounded side: the range every target can store (InfluxDB: int64 nanoseconds since 1970). */
export const ALL_TIME: TimeRange = { from: Date.UTC(1678, 0, 1), to: Date.UTC(2262, 0, 1) };

export function timeRange(filter: Filter | null): TimeRange {
  return filter ? rangeOf(toNegationNormalForm(filter)) : ALL_TIME;
}

const NEGATED = { '<': '>=', '<=': '>', '>': '<=', '>=': '<', '=': '!=', '!=': '=' } as const;

function rangeOf(filter: Filter): TimeRange {
  if (filter.kind === 'and' || filter.kind === 'or') {
    const parts = filter.items.map(rangeOf);
    return filter.kind === 'and'
      ? { from: Math.max(...parts.map((p) => p.from)), to: Math.min(...parts.map((p) => p.to)) }
      : { from: Math.min(...parts.map((p) => p.from)), to: Math.max(...parts.map((p) => p.to)) };
  }
  const negated = filter.kind === 'not';
  const atom = negated ? filter.operand : filter;
  if (atom.kind !== 'compare' || atom.target.kind !== 'column' || atom.target.name !== 'time')
    return ALL_TIME;
  const at = (atom.value as Date).getTime();
  // `time` is never null, so NOT (time < x) is exactly time >= x.
  switch (negated ? NEGATED[atom.op] : atom.op) {
    case '<':
      return { from: ALL_TIME.from, to: at };
    case '<=':
      return { from: ALL_TIME.from, to: at + 1 };
    case '>':
    case '>=':
      return { from: at, to: ALL_TIME.to };
    case '=':
      return { from: at, to: at + 1 };
    default:
      return ALL_TIME;
  }
}
