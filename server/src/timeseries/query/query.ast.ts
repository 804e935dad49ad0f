/**
 * The typed syntax tree of the time-series query language (grammar: docs/timeseries-query.md).
 * Every node carries `pos`, the 0-based offset of its first character in the query text, so
 * semantic errors point at the place they are about.
 */

/** Columns a query can name; the whitelist (query.columns.ts) maps each to fixed SQL. */
export const COLUMN_NAMES = [
  'time',
  'value',
  'text',
  'state.id',
  'state.key',
  'state.title',
  'state.unit',
  'twin.id',
  'twin.title',
  'twin.referenceId',
  'twin.hierarchy',
] as const;
export type ColumnName = (typeof COLUMN_NAMES)[number];

export const AGGREGATE_FUNCTIONS = ['mean', 'min', 'max', 'sum', 'count', 'first', 'last'] as const;
export type AggregateFunction = (typeof AGGREGATE_FUNCTIONS)[number];

export type DurationUnit = 's' | 'm' | 'h' | 'd' | 'w';

export interface Duration {
  amount: number;
  unit: DurationUnit;
  /** The whole duration in milliseconds. */
  ms: number;
  pos: number;
}

/** A point column or a twin/state attribute. */
export interface ColumnRef {
  kind: 'column';
  name: ColumnName;
  pos: number;
}

/** A custom property of the twin, `property.site` or `property."Site name"`. */
export interface PropertyRef {
  kind: 'property';
  name: string;
  pos: number;
}

/** `bucket(1h)` or `bucket(1d, 'Europe/Berlin')`: the start of the time bucket a point falls in. */
export interface BucketExpr {
  kind: 'bucket';
  width: Duration;
  timeZone: string | null;
  pos: number;
}

/** `mean(value)`, `count(*)`, `last(text)` … (`avg` is parsed as `mean`). */
export interface AggregateExpr {
  kind: 'aggregate';
  fn: AggregateFunction;
  /** `*` only with count. */
  arg: 'value' | 'text' | '*';
  pos: number;
}

export type ValueExpr = ColumnRef | PropertyRef | BucketExpr;
export type SelectExpr = ValueExpr | AggregateExpr;

export interface SelectItem {
  expr: SelectExpr;
  alias: string | null;
  pos: number;
}

/** A point in time: an ISO timestamp or `now()`, shifted by durations. */
export interface TimeLiteral {
  kind: 'time';
  base: { type: 'now' } | { type: 'iso'; text: string };
  /** Signed shifts in milliseconds, e.g. `now() - 30d` → [-2592000000]. */
  offsetMs: number;
  pos: number;
}

export interface StringLiteral {
  kind: 'string';
  value: string;
  pos: number;
}

export interface NumberLiteral {
  kind: 'number';
  value: number;
  pos: number;
}

export type Literal = TimeLiteral | StringLiteral | NumberLiteral;

export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=';

export type Condition =
  | { kind: 'and'; left: Condition; right: Condition; pos: number }
  | { kind: 'or'; left: Condition; right: Condition; pos: number }
  | { kind: 'not'; operand: Condition; pos: number }
  | { kind: 'compare'; target: ColumnRef | PropertyRef; op: CompareOp; value: Literal; pos: number }
  | { kind: 'in'; target: ColumnRef | PropertyRef; values: Literal[]; pos: number }
  | {
      kind: 'like';
      target: ColumnRef | PropertyRef;
      pattern: StringLiteral;
      caseInsensitive: boolean;
      pos: number;
    }
  | { kind: 'isNull'; target: ColumnRef | PropertyRef; pos: number }
  | { kind: 'under'; twinId: StringLiteral; pos: number }
  | { kind: 'hasTag'; tag: StringLiteral; pos: number };

export interface OrderItem {
  expr: SelectExpr | { kind: 'alias'; name: string; pos: number };
  direction: 'asc' | 'desc';
  pos: number;
}

export interface GroupItem {
  expr: ValueExpr | { kind: 'alias'; name: string; pos: number };
  pos: number;
}

export interface Query {
  select: SelectItem[] | 'star';
  /** Position of `*` when `select` is `'star'`. */
  selectPos: number;
  where: Condition | null;
  groupBy: GroupItem[] | null;
  orderBy: OrderItem[] | null;
  limit: { value: number; pos: number } | null;
}
