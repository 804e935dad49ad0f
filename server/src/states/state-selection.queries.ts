import type { EntityManager } from '@mikro-orm/postgresql';

export interface SelectedState {
  id: string;
  twinId: string;
  key: string;
  title: string;
  unit: string | null;
}

/**
 * Reads of the states domain for export plans: the data states of `twinIds` with one of `keys`
 * (every state when `keys` is empty), ordered by twin and key. Callers have selected the twins
 * within the plan's account and scopes. Ids travel as one JSON parameter: a selection can hold more
 * twins than a statement takes parameters.
 */
export async function statesOfTwins(
  em: EntityManager,
  twinIds: string[],
  keys: string[],
): Promise<SelectedState[]> {
  if (twinIds.length === 0) return [];
  const byKey = keys.length > 0;
  const rows = await em
    .getConnection()
    .execute<Array<{ id: string; twin_id: string; key: string; title: string; unit: string | null }>>(
      `SELECT id, twin_id, key, title, unit FROM data_states
        WHERE twin_id = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)::uuid))
          ${byKey ? 'AND key = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))' : ''}
        ORDER BY twin_id, key`,
      byKey ? [JSON.stringify(twinIds), JSON.stringify(keys)] : [JSON.stringify(twinIds)],
    );
  return rows.map((r) => ({ id: r.id, twinId: r.twin_id, key: r.key, title: r.title, unit: r.unit }));
}

/** A device's own state as an export reads it: the series of the data state fed by it. */
export interface SelectedDeviceState {
  /** The data state whose points are the series. */
  id: string;
  deviceId: string;
  /** The device state key (`volume`, `_meta.rssi`), not the data state's. */
  key: string;
  unit: string | null;
}

/**
 * The series of device states (export plans over devices). Devices keep only their current values
 * (`device_states`); what a device sends over time is stored as the points of the data states
 * that take it as their `connector` source. So the states of `deviceIds` with one of `keys` (all
 * when empty) are those data states, one per device and key (the oldest, when several twins take
 * the same device state, so no point is written twice), on twins `visibleTwin` allows: the same
 * twins whose points the time-series query engine reads for the plan's scopes.
 */
export async function statesOfDevices(
  em: EntityManager,
  deviceIds: string[],
  keys: string[],
  visibleTwin: { sql: string; params: unknown[] },
): Promise<SelectedDeviceState[]> {
  if (deviceIds.length === 0) return [];
  const byKey = keys.length > 0;
  const rows = await em
    .getConnection()
    .execute<Array<{ id: string; device_id: string; key: string; unit: string | null }>>(
      `SELECT DISTINCT ON (s.source ->> 'deviceId', s.source ->> 'stateKey')
            s.id, s.source ->> 'deviceId' AS device_id, s.source ->> 'stateKey' AS key, s.unit
       FROM data_states s JOIN digital_twins t ON t.id = s.twin_id
      WHERE s.source ->> 'type' = 'connector'
        AND (s.source ->> 'deviceId') = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))
        ${byKey ? "AND (s.source ->> 'stateKey') = ANY(ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))" : ''}
        AND ${visibleTwin.sql}
      ORDER BY s.source ->> 'deviceId', s.source ->> 'stateKey', s.created_at, s.id`,
      [JSON.stringify(deviceIds), ...(byKey ? [JSON.stringify(keys)] : []), ...visibleTwin.params],
    );
  return rows.map((r) => ({ id: r.id, deviceId: r.device_id, key: r.key, unit: r.unit }));
}
