import type { StateValueType } from '../data-state.entity.js';
import type { StateSource } from '../state-source.js';
import { knownTimeZone } from './calendar.js';
import type { StateDefinition } from './routing-index.js';
import type { StateRow } from './state-work.js';

/**
 * The state engine's SQL: plain statements on a pg client (the ingest batch's transaction, or the
 * engine's own), multi-row by arrays, never one statement per state.
 */

export interface Queryable {
  query<R extends object = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: R[] }>;
}

const DEFINITIONS_SQL = `
  SELECT s.id, s.twin_id, s.account_id, s.key, s.value_type, s.source, t.reference_id, a.time_zone
    FROM data_states s
    JOIN digital_twins t ON t.id = s.twin_id
    JOIN accounts a ON a.id = s.account_id`;

interface DefinitionRow {
  id: string;
  twin_id: string;
  account_id: string;
  key: string;
  value_type: StateValueType;
  source: StateSource | null;
  reference_id: string | null;
  time_zone: string | null;
}

export async function loadDefinitions(db: Queryable): Promise<StateDefinition[]> {
  const { rows } = await db.query<DefinitionRow>(DEFINITIONS_SQL);
  return rows.map((r) => ({
    id: r.id,
    twinId: r.twin_id,
    accountId: r.account_id,
    key: r.key,
    valueType: r.value_type,
    source: r.source && typeof r.source === 'object' && 'type' in r.source ? r.source : null,
    timeZone: knownTimeZone(r.time_zone),
    referenceId: r.reference_id,
  }));
}

// In id order: concurrent engine transactions lock shared rows in the same order (no deadlock).
const LOCK_SQL = `
  SELECT id, value, timestamp, warning, engine FROM data_states
   WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE`;

export async function lockRows(db: Queryable, ids: string[]): Promise<Map<string, StateRow>> {
  const { rows } = await db.query<StateRow>(LOCK_SQL, [ids]);
  return new Map(
    rows.map((r) => [r.id, { ...r, engine: r.engine && typeof r.engine === 'object' ? r.engine : {} }]),
  );
}

// updated_at describes the definition, not the value: left alone.
const WRITE_SQL = `
  UPDATE data_states s
     SET value = u.v::jsonb, timestamp = u.t, warning = u.w, engine = u.e::jsonb
    FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::text[], $5::text[]) AS u(id, v, t, w, e)
   WHERE s.id = u.id`;

export async function writeRows(db: Queryable, rows: StateRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(WRITE_SQL, [
    rows.map((r) => r.id),
    // SQL NULL for a null value (jsonb 'null' would read back the same, but IS NULL would not match).
    rows.map((r) => (r.value === null || r.value === undefined ? null : JSON.stringify(r.value))),
    rows.map((r) => r.timestamp),
    rows.map((r) => r.warning),
    rows.map((r) => JSON.stringify(r.engine)),
  ]);
}

/** sum/mean/min/max/count of each state's stored points in [since, until): one statement for all. */
const WINDOW_SQL = `
  SELECT u.id, count(p.*)::int AS count, sum(p.value) AS sum, avg(p.value) AS mean,
         min(p.value) AS min, max(p.value) AS max
    FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[]) AS u(id, source, since)
    LEFT JOIN ts_points p ON p.state_id = u.source AND p.time >= u.since AND p.time < $4
   GROUP BY u.id`;

export interface WindowFigures {
  count: number;
  sum: number | null;
  mean: number | null;
  min: number | null;
  max: number | null;
}

export async function windowFigures(
  db: Queryable,
  windows: Array<{ id: string; source: string; since: Date }>,
  until: Date,
): Promise<Map<string, WindowFigures>> {
  if (windows.length === 0) return new Map();
  const { rows } = await db.query<{ id: string } & WindowFigures>(WINDOW_SQL, [
    windows.map((w) => w.id),
    windows.map((w) => w.source),
    windows.map((w) => w.since),
    until,
  ]);
  return new Map(rows.map(({ id, ...figures }) => [id, figures]));
}
