import type { ColumnName } from './query.ast.js';

/**
 * The whitelist: every name a query can use, with the fixed SQL it becomes and how the in-memory
 * evaluator reads the same thing. Query text never reaches SQL except through this table (names)
 * and bind parameters (literals). SQL aliases: `p` ts_points, `s` data_states, `tw` the twins CTE.
 */

export type ColumnType = 'time' | 'number' | 'string' | 'uuid';

/** The twin and state a point belongs to, as the evaluator holds it. */
export interface StateRow {
  stateId: string;
  stateKey: string;
  stateTitle: string;
  stateUnit: string | null;
  twinId: string;
  twinTitle: string;
  twinReferenceId: string | null;
  twinHierarchy: string;
  /** Twin ids from the root down to the twin itself. */
  twinPath: string[];
  twinTags: string[];
  twinProperties: Record<string, unknown>;
}

/** One raw point joined with its state, the row every condition and key is evaluated on. */
export interface PointRow {
  time: Date;
  value: number | null;
  text: string | null;
  state: StateRow;
}

export interface ColumnSpec {
  type: ColumnType;
  /** Where the column lives; point columns cannot be resolved without reading points. */
  level: 'point' | 'state';
  sql: string;
  /** Can the column be null (drives IS NULL checks only)? */
  nullable: boolean;
  read: (row: PointRow) => Date | number | string | null;
}

export const COLUMNS: Record<ColumnName, ColumnSpec> = {
  time: { type: 'time', level: 'point', sql: 'p.time', nullable: false, read: (r) => r.time },
  value: { type: 'number', level: 'point', sql: 'p.value', nullable: true, read: (r) => r.value },
  text: { type: 'string', level: 'point', sql: 'p.text', nullable: true, read: (r) => r.text },
  'state.id': { type: 'uuid', level: 'state', sql: 's.id', nullable: false, read: (r) => r.state.stateId },
  'state.key': {
    type: 'string',
    level: 'state',
    sql: 's.key',
    nullable: false,
    read: (r) => r.state.stateKey,
  },
  'state.title': {
    type: 'string',
    level: 'state',
    sql: 's.title',
    nullable: false,
    read: (r) => r.state.stateTitle,
  },
  'state.unit': {
    type: 'string',
    level: 'state',
    sql: 's.unit',
    nullable: true,
    read: (r) => r.state.stateUnit,
  },
  'twin.id': { type: 'uuid', level: 'state', sql: 'tw.id', nullable: false, read: (r) => r.state.twinId },
  'twin.title': {
    type: 'string',
    level: 'state',
    sql: 'tw.title',
    nullable: false,
    read: (r) => r.state.twinTitle,
  },
  'twin.referenceId': {
    type: 'string',
    level: 'state',
    sql: 'tw.reference_id',
    nullable: true,
    read: (r) => r.state.twinReferenceId,
  },
  'twin.hierarchy': {
    type: 'string',
    level: 'state',
    sql: 'tw.hierarchy',
    nullable: false,
    read: (r) => r.state.twinHierarchy,
  },
};

/** Custom properties are text fields; a missing one is null. */
export const PROPERTY_SQL = '(tw.custom_properties ->> ?)';
export const readProperty = (row: PointRow, name: string): string | null => {
  const value = row.state.twinProperties[name];
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
};

/** Separator between the twin titles of `twin.hierarchy` (`Site / Hall 1 / Pump 3`). */
export const HIERARCHY_SEPARATOR = ' / ';
