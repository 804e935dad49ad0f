import type { AggregateExpr, BucketExpr, ColumnName, CompareOp } from './query.ast.js';

/**
 * A checked query, ready for either back end: the SQL compiler (query.compile-sql.ts) and the
 * in-memory evaluator (query.evaluate.ts) both read only this, which keeps their semantics equal.
 */

export type Operand = { kind: 'column'; name: ColumnName } | { kind: 'property'; name: string };
/** A per-point expression: group keys, selected columns, sort keys. */
export type KeyExpr = Operand | Omit<BucketExpr, 'pos'>;
export type LiteralValue = Date | number | string;

export type Filter =
  | { kind: 'and' | 'or'; items: Filter[] }
  | { kind: 'not'; operand: Filter }
  | { kind: 'compare'; target: Operand; op: CompareOp; value: LiteralValue }
  | { kind: 'in'; target: Operand; values: LiteralValue[] }
  | { kind: 'like'; target: Operand; pattern: string; caseInsensitive: boolean }
  | { kind: 'isNull'; target: Operand }
  | { kind: 'under'; twinId: string }
  | { kind: 'hasTag'; tag: string }
  | { kind: 'const'; value: boolean };

export type OutputType = 'time' | 'number' | 'string';
export type Aggregate = Pick<AggregateExpr, 'fn' | 'arg'>;

export type ValueSource = { kind: 'key'; index: number } | { kind: 'agg'; agg: Aggregate };

export interface PlanColumn {
  name: string;
  type: OutputType;
  source: ValueSource;
}

/** Sort on an output source, or (raw queries) on a point field for a stable order. */
export interface PlanSort {
  source: ValueSource | { kind: 'point'; field: 'time' | 'stateId' | 'value' | 'text' };
  direction: 'asc' | 'desc';
  type: OutputType;
}

export interface Plan {
  columns: PlanColumn[];
  /** True when the rows are groups (aggregates or GROUP BY), false when they are points. */
  aggregated: boolean;
  /** Per-point expressions; when aggregated, exactly the group keys. */
  keys: KeyExpr[];
  filter: Filter | null;
  /** The requested order followed by tie-breakers, so both back ends return the same row order. */
  sort: PlanSort[];
  limit: number;
  usesHierarchy: boolean;
}

export const keyId = (key: KeyExpr): string =>
  key.kind === 'bucket'
    ? `bucket:${key.width.ms}:${key.timeZone ?? ''}`
    : key.kind === 'property'
      ? `property:${key.name}`
      : `column:${key.name}`;

export const aggId = (agg: Aggregate): string => `${agg.fn}(${agg.arg})`;

export const aggregateType = (agg: Aggregate): OutputType =>
  agg.fn === 'count' ? 'number' : agg.arg === 'text' ? 'string' : 'number';
