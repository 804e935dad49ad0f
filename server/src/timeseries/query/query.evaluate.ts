import { COLUMNS, readProperty, type PointRow, type StateRow } from './query.columns.js';
import type { Aggregate, Filter, KeyExpr, Operand, Plan, PlanSort, ValueSource } from './query.plan.js';
import { aggId } from './query.plan.js';
import { bucketStart } from './query.time.js';

/**
 * Runs a plan over raw points in memory, for serving targets that cannot run SQL (InfluxDB).
 * Semantics follow the SQL compiler exactly: SQL's three-valued logic in filters, NULLs last
 * ascending and first descending, text ordered by code point (`COLLATE "C"`), first/last by
 * (time, state id, value), one row for an aggregate without groups even when nothing matched.
 * Sums and means of fractional values may differ from PostgreSQL in the last bits (summation order).
 */

export type Cell = Date | number | string | null;

export interface RawPoint {
  stateId: string;
  time: Date;
  value: number | null;
  text: string | null;
}

export function evaluatePlan(
  plan: Plan,
  states: ReadonlyMap<string, StateRow>,
  points: Iterable<RawPoint>,
): Cell[][] {
  const rows: PointRow[] = [];
  for (const point of points) {
    const state = states.get(point.stateId);
    if (!state) continue;
    const row: PointRow = { time: point.time, value: point.value, text: point.text, state };
    if (!plan.filter || test(plan.filter, row) === true) rows.push(row);
  }
  return plan.aggregated ? aggregateRows(plan, rows) : pointRows(plan, rows);
}

function pointRows(plan: Plan, rows: PointRow[]): Cell[][] {
  const withKeys = rows.map((row) => ({ row, keys: plan.keys.map((k) => keyValue(k, row)) }));
  const value = (item: (typeof withKeys)[number], sort: PlanSort): Cell => {
    const source = sort.source;
    if (source.kind === 'key') return item.keys[source.index]!;
    if (source.kind === 'agg') return null;
    return source.field === 'stateId' ? item.row.state.stateId : item.row[source.field];
  };
  withKeys.sort((a, b) =>
    compareBy(
      plan.sort,
      (s) => value(a, s),
      (s) => value(b, s),
    ),
  );
  return withKeys
    .slice(0, plan.limit)
    .map((item) => plan.columns.map((c) => (c.source.kind === 'key' ? item.keys[c.source.index]! : null)));
}

interface Group {
  keys: Cell[];
  accumulators: Map<string, Accumulator>;
}

function aggregateRows(plan: Plan, rows: PointRow[]): Cell[][] {
  const aggregates = new Map<string, Aggregate>();
  for (const source of [...plan.columns.map((c) => c.source), ...plan.sort.map((s) => s.source)])
    if (source.kind === 'agg') aggregates.set(aggId(source.agg), source.agg);
  const groups = new Map<string, Group>();
  const groupOf = (keys: Cell[]): Group => {
    const id = JSON.stringify(keys.map((k) => (k instanceof Date ? k.getTime() : k)));
    let group = groups.get(id);
    if (!group) {
      group = { keys, accumulators: new Map([...aggregates].map(([id, agg]) => [id, new Accumulator(agg)])) };
      groups.set(id, group);
    }
    return group;
  };
  // Without GROUP BY keys SQL answers one row even over no points (count 0, the rest null).
  if (plan.keys.length === 0) groupOf([]);
  for (const row of rows) {
    const group = groupOf(plan.keys.map((k) => keyValue(k, row)));
    for (const accumulator of group.accumulators.values()) accumulator.add(row);
  }
  const value = (group: Group, source: ValueSource | PlanSort['source']): Cell => {
    if (source.kind === 'key') return group.keys[source.index]!;
    if (source.kind === 'agg') return group.accumulators.get(aggId(source.agg))!.result();
    return null;
  };
  const sorted = [...groups.values()].sort((a, b) =>
    compareBy(
      plan.sort,
      (s) => value(a, s.source),
      (s) => value(b, s.source),
    ),
  );
  return sorted.slice(0, plan.limit).map((g) => plan.columns.map((c) => value(g, c.source)));
}

class Accumulator {
  private count = 0;
  private sum = 0;
  private best: { value: Cell; time: number; stateId: string } | null = null;
  private extreme: number | null = null;

  constructor(private readonly agg: Aggregate) {}

  add(row: PointRow): void {
    if (this.agg.arg === '*') {
      this.count++;
      return;
    }
    const value = this.agg.arg === 'text' ? row.text : row.value;
    if (value === null) return;
    this.count++;
    if (typeof value === 'number') {
      this.sum += value;
      if (this.extreme === null || (this.agg.fn === 'min' ? value < this.extreme : value > this.extreme))
        this.extreme = value;
    }
    if (this.agg.fn === 'first' || this.agg.fn === 'last') {
      const candidate = { value, time: row.time.getTime(), stateId: row.state.stateId };
      const order = this.best ? compareFirst(candidate, this.best) : 0;
      if (!this.best || (this.agg.fn === 'first' ? order < 0 : order > 0)) this.best = candidate;
    }
  }

  result(): Cell {
    switch (this.agg.fn) {
      case 'count':
        return this.count;
      case 'sum':
        return this.count ? this.sum : null;
      case 'mean':
        return this.count ? this.sum / this.count : null;
      case 'min':
      case 'max':
        return this.extreme;
      case 'first':
      case 'last':
        return this.best?.value ?? null;
    }
  }
}

type Candidate = { value: Cell; time: number; stateId: string };
const compareFirst = (a: Candidate, b: Candidate): number =>
  a.time - b.time || compareText(a.stateId, b.stateId) || compareCells(a.value, b.value);

function keyValue(key: KeyExpr, row: PointRow): Cell {
  if (key.kind === 'bucket') return new Date(bucketStart(row.time.getTime(), key.width.ms, key.timeZone));
  return operandValue(key, row);
}

function operandValue(operand: Operand, row: PointRow): Cell {
  return operand.kind === 'property' ? readProperty(row, operand.name) : COLUMNS[operand.name].read(row);
}

function compareBy(sort: PlanSort[], a: (s: PlanSort) => Cell, b: (s: PlanSort) => Cell): number {
  for (const s of sort) {
    const order = compareCells(a(s), b(s));
    if (order !== 0) return s.direction === 'desc' ? -order : order;
  }
  return 0;
}

/** Ascending order with NULL after every value (so first when descending), like PostgreSQL. */
export function compareCells(a: Cell, b: Cell): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  return compareText(String(a), String(b));
}

/** Code-point order (UTF-8 byte order, PostgreSQL's "C" collation), not UTF-16 unit order. */
export function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort after U+E000–U+FFFF in code-point order.
    if (x >= 0xd800 && y >= 0xd800) {
      x += x < 0xe000 ? 0x2000 : -0x800;
      y += y < 0xe000 ? 0x2000 : -0x800;
    }
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

type Truth = boolean | null;

/** SQL's three-valued logic: a comparison with NULL is unknown (null), and so is NOT unknown. */
export function test(filter: Filter, row: PointRow): Truth {
  switch (filter.kind) {
    case 'and': {
      let unknown = false;
      for (const item of filter.items) {
        const t = test(item, row);
        if (t === false) return false;
        if (t === null) unknown = true;
      }
      return unknown ? null : true;
    }
    case 'or': {
      let unknown = false;
      for (const item of filter.items) {
        const t = test(item, row);
        if (t === true) return true;
        if (t === null) unknown = true;
      }
      return unknown ? null : false;
    }
    case 'not': {
      const t = test(filter.operand, row);
      return t === null ? null : !t;
    }
    case 'const':
      return filter.value;
    case 'under':
      return row.state.twinPath.includes(filter.twinId);
    case 'hasTag':
      return row.state.twinTags.includes(filter.tag);
    case 'isNull':
      return operandValue(filter.target, row) === null;
    case 'like': {
      const value = operandValue(filter.target, row);
      return value === null ? null : likeRegex(filter.pattern, filter.caseInsensitive).test(String(value));
    }
    case 'in': {
      const value = operandValue(filter.target, row);
      if (value === null) return null;
      return filter.values.some((v) => compareCells(value, v) === 0);
    }
    case 'compare': {
      const value = operandValue(filter.target, row);
      if (value === null) return null;
      const order = compareCells(value, filter.value);
      switch (filter.op) {
        case '=':
          return order === 0;
        case '!=':
          return order !== 0;
        case '<':
          return order < 0;
        case '<=':
          return order <= 0;
        case '>':
          return order > 0;
        case '>=':
          return order >= 0;
      }
    }
  }
}

const likeCache = new Map<string, RegExp>();

/** LIKE as a regular expression: `%` any run, `_` one character, `\` escapes the next one. */
export function likeRegex(pattern: string, caseInsensitive: boolean): RegExp {
  const id = `${caseInsensitive ? 'i' : 's'}${pattern}`;
  let regex = likeCache.get(id);
  if (regex) return regex;
  let source = '';
  const chars = [...pattern];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '\\' && i + 1 < chars.length) source += escapeRegex(chars[++i]!);
    else if (c === '%') source += '.*';
    else if (c === '_') source += '.';
    else source += escapeRegex(c);
  }
  regex = new RegExp(`^${source}$`, caseInsensitive ? 'isu' : 'su');
  if (likeCache.size > 1000) likeCache.clear();
  likeCache.set(id, regex);
  return regex;
}

// Only syntax characters and `/`: with the `u` flag any other escape (`\-` …) is a SyntaxError.
const escapeRegex = (c: string) => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
