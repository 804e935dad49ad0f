import type pg from 'pg';
import { now } from './load.js';

/**
 * The fleet shape's site (bench/fleet.ts, bench/cluster.ts): an mqtt-broker connector, one JSON driver,
 * a device per key with a `referenceId`, and a twin per device with the three `dynamic-routing` states
 * `a`, `b`, `c`; so every `{a, b, c}` message is three twin state changes and three time-series points.
 */

export const FLEET_STATES = ['a', 'b', 'c'] as const;
export const FLEET_ADMIN = { email: 'bench@stellwerk.test', password: 'bench password 123' };

export interface FleetSite {
  token: string;
  connectorId: string;
  credentials: { username: string; password: string };
  deviceIds: string[];
  twinIds: string[];
  stateIds: string[];
  /** Seconds the devices, twins and states took. */
  seconds: number;
}

export async function seedFleet(baseUrl: string, db: pg.Client, keys: string[]): Promise<FleetSite> {
  const call = async <T>(route: string, body: unknown, token?: string) => {
    const response = await fetch(`${baseUrl}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${route}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
  const { token, user } = await call<{ token: string; user: { accountId: string } }>(
    '/xapi/v1/auth/login',
    FLEET_ADMIN,
  );
  const connector = await call<{ id: string; credentials: { username: string; password: string } }>(
    '/xapi/v1/connectors',
    { title: 'fleet', type: 'mqtt-broker' },
    token,
  );
  const t0 = now();
  // Devices and their JSON driver straight into the tables: the benches measure ingest, not CRUD.
  const driver = await db.query<{ id: string }>(
    `INSERT INTO device_drivers (id, account_id, title, description, shared, parser, target_variables, health_config, created_at, updated_at)
     VALUES (gen_random_uuid(), $1, 'fleet json', '', false, '{"type":"json"}', '[]', '{"rules":[]}', now(), now()) RETURNING id`,
    [user.accountId],
  );
  const devices = await db.query<{ id: string }>(
    `INSERT INTO virtual_devices (id, account_id, connector_id, driver_id, device_id, title, description, tags, groups,
        key_value_data, activation_method, skip_frame_counter_check, health_state, reference_id, created_at, updated_at)
     SELECT gen_random_uuid(), $1, $2, $3, k, k, '', '{}', '{}', '{}', 'OTAA', false, 'Unknown', 'ref-' || k, now(), now()
       FROM unnest($4::text[]) AS k RETURNING id`,
    [user.accountId, connector.id, driver.rows[0]!.id, keys],
  );
  // Twins and states straight into the tables too (thousands of XAPI calls would take minutes); the
  // last twin goes through the XAPI, which makes the state engines reload their routing index.
  const twins = await db.query<{ id: string }>(
    `INSERT INTO digital_twins (id, account_id, path, title, reference_id, custom_properties, tags, created_at, updated_at)
     SELECT id, $1, ARRAY[id], 'fleet ' || k, 'ref-' || k, '{}', '{}', now(), now()
       FROM (SELECT gen_random_uuid() AS id, k, ord FROM unnest($2::text[]) WITH ORDINALITY AS u(k, ord)) AS t
      ORDER BY ord RETURNING id`,
    [user.accountId, keys.slice(0, -1)],
  );
  const twinIds = twins.rows.map((r) => r.id);
  const states = await db.query<{ id: string }>(
    `INSERT INTO data_states (id, account_id, twin_id, key, title, value_type, source, meta, engine, created_at, updated_at)
     SELECT gen_random_uuid(), $1, t.id, s.key, s.key, 'number',
            jsonb_build_object('type', 'dynamic-routing', 'stateKey', s.key), '{}', '{}', now(), now()
       FROM unnest($2::uuid[]) WITH ORDINALITY AS t(id, ord), unnest($3::text[]) WITH ORDINALITY AS s(key, sord)
      ORDER BY t.ord, s.sord RETURNING id`,
    [user.accountId, twinIds, FLEET_STATES],
  );
  const stateIds = states.rows.map((r) => r.id);
  const lastKey = keys.at(-1)!;
  const last = await call<{ id: string }>(
    '/xapi/v1/digital-twins',
    { title: `fleet ${lastKey}`, referenceId: `ref-${lastKey}` },
    token,
  );
  twinIds.push(last.id);
  for (const key of FLEET_STATES) {
    const state = await call<{ id: string }>(
      `/xapi/v1/digital-twins/${last.id}/states`,
      { key, title: key, valueType: 'number', source: { type: 'dynamic-routing', stateKey: key } },
      token,
    );
    stateIds.push(state.id);
  }
  return {
    token,
    connectorId: connector.id,
    credentials: connector.credentials,
    deviceIds: devices.rows.map((r) => r.id),
    twinIds,
    stateIds,
    seconds: (now() - t0) / 1000,
  };
}
