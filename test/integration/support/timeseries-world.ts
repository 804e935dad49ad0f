import type pg from 'pg';
import { newId } from '../../../server/src/platform/crypto/ids.js';
import type { TimeSeries } from '../../../server/src/timeseries/timeseries.module.js';
import type { TimeSeriesPoint } from '../../../server/src/timeseries/timeseries.types.js';

/** A twin with data states, inserted straight into the tables (time-series tests need rows, not CRUD). */
export interface TwinWithStates {
  accountId: string;
  twinId: string;
  states: Array<{ id: string; key: string }>;
}

export async function insertTwinWithStates(
  db: Pick<pg.Pool, 'query'>,
  accountId: string,
  keys: string[],
): Promise<TwinWithStates> {
  const twinId = newId();
  await db.query(
    `INSERT INTO digital_twins (id, account_id, path, title, custom_properties, tags, created_at, updated_at)
     VALUES ($1, $2, ARRAY[$1]::uuid[], 'time-series twin', '{}', '{}', now(), now())`,
    [twinId, accountId],
  );
  const states = keys.map((key) => ({ id: newId(), key }));
  for (const state of states) {
    await db.query(
      `INSERT INTO data_states (id, account_id, twin_id, key, meta, engine, created_at, updated_at)
       VALUES ($1, $2, $3, $4, '{}', '{}', now(), now())`,
      [state.id, accountId, twinId, state.key],
    );
  }
  return { accountId, twinId, states };
}

/** Points of one state: `count` values one second apart from `start`. */
export function pointsOf(
  world: TwinWithStates,
  stateIndex: number,
  start: Date,
  count: number,
  value: (i: number) => Pick<TimeSeriesPoint, 'value' | 'text'> = (i) => ({ value: i + 0.5, text: null }),
): TimeSeriesPoint[] {
  const state = world.states[stateIndex]!;
  return Array.from({ length: count }, (_, i) => ({
    accountId: world.accountId,
    twinId: world.twinId,
    stateId: state.id,
    stateKey: state.key,
    time: new Date(start.getTime() + i * 1000),
    ...value(i),
  }));
}

/**
 * Stores points as the state engine does, through the module's sink, one transaction per `perRow`:
 * `ts_points` rows for the postgres target, an outbox row for the external ones.
 */
export async function appendPoints(
  ts: Pick<TimeSeries, 'pool' | 'sink'>,
  points: TimeSeriesPoint[],
  perRow = 500,
): Promise<void> {
  for (let start = 0; start < points.length; start += perRow) {
    const client = await ts.pool.connect();
    try {
      await client.query('BEGIN');
      await ts.sink.append(client, points.slice(start, start + perRow));
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  }
}

/** Stable order for comparing point lists from different targets. */
export const byStateAndTime = (points: TimeSeriesPoint[]) =>
  [...points].sort((a, b) => a.time.getTime() - b.time.getTime() || a.stateId.localeCompare(b.stateId));
