import type pg from 'pg';
import type { PacketOutcome } from './parse-packet.stage.js';

/**
 * Stage 3: one transaction per batch writes everything the batch changes, in multi-row statements:
 * device states, lastSeen, the packets' status (and resolved device), and the ingest cursor. All or nothing: after a crash the whole batch is replayed, and replaying is
 * harmless, because a state row only moves forward (a packet never overwrites a newer packet's value).
 *
 * Failure behaviour: any error rolls the transaction back and is thrown; the pipeline decides
 * whether to retry (database unavailable) or to split the batch (one packet's data is refused).
 */

export const CURSOR_KEY = 'ingest_cursor';

// A state written by the API or a rule (packet_id null) yields only to a packet that is not older.
const STATES_SQL = `
  INSERT INTO device_states (device_id, key, value, timestamp, packet_id)
  SELECT u.d, u.k, u.v::jsonb, u.t, u.p
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::bigint[]) AS u(d, k, v, t, p)
    JOIN virtual_devices vd ON vd.id = u.d
  ON CONFLICT (device_id, key) DO UPDATE
     SET value = EXCLUDED.value, timestamp = EXCLUDED.timestamp, packet_id = EXCLUDED.packet_id
   WHERE device_states.packet_id <= EXCLUDED.packet_id
      OR (device_states.packet_id IS NULL AND device_states.timestamp <= EXCLUDED.timestamp)`;

const LAST_SEEN_SQL = `
  UPDATE virtual_devices v SET last_seen = u.t
    FROM unnest($1::uuid[], $2::timestamptz[]) AS u(d, t)
   WHERE v.id = u.d AND (v.last_seen IS NULL OR v.last_seen < u.t)`;

const PACKETS_SQL = `
  UPDATE packets p SET status = u.s, error = u.e, device_uuid = u.d
    FROM unnest($1::bigint[], $2::text[], $3::text[], $4::uuid[]) AS u(id, s, e, d)
   WHERE p.id = u.id`;

const CURSOR_SQL = `
  INSERT INTO system_settings (key, value, updated_at) VALUES ($1, to_jsonb($2::bigint::text), now())
  ON CONFLICT (key) DO UPDATE SET value = to_jsonb(GREATEST((system_settings.value #>> '{}')::bigint, $2::bigint)::text),
                                  updated_at = now()`;

const ERROR_MAX_LENGTH = 1000;

export async function commitBatch(pool: pg.Pool, outcomes: PacketOutcome[], cursor: bigint): Promise<void> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const states = stateRows(outcomes);
    if (states.d.length > 0)
      await client.query(STATES_SQL, [states.d, states.k, states.v, states.t, states.p]);
    const seen = lastSeenRows(outcomes);
    if (seen.d.length > 0) await client.query(LAST_SEEN_SQL, [seen.d, seen.t]);
    await client.query(PACKETS_SQL, [
      outcomes.map((o) => o.packet.id.toString()),
      outcomes.map((o) => o.status),
      outcomes.map((o) => o.error?.slice(0, ERROR_MAX_LENGTH) ?? null),
      outcomes.map((o) => o.device?.id ?? null),
    ]);
    await client.query(CURSOR_SQL, [CURSOR_KEY, cursor.toString()]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw error;
  } finally {
    client.release(broken);
  }
}

/** The last value per (device, key) wins: one statement cannot update the same row twice. */
function stateRows(outcomes: PacketOutcome[]) {
  const latest = new Map<string, { d: string; k: string; v: string; t: Date; p: string }>();
  for (const o of outcomes) {
    for (const u of o.updates) {
      const p = u.packetId.toString();
      for (const [k, value] of Object.entries(u.states)) {
        const key = `${u.deviceId}\u0000${k}`;
        latest.delete(key);
        latest.set(key, { d: u.deviceId, k, v: JSON.stringify(value ?? null), t: u.receivedAt, p });
      }
    }
  }
  const rows = [...latest.values()];
  return {
    d: rows.map((r) => r.d),
    k: rows.map((r) => r.k),
    v: rows.map((r) => r.v),
    t: rows.map((r) => r.t),
    p: rows.map((r) => r.p),
  };
}

function lastSeenRows(outcomes: PacketOutcome[]) {
  const latest = new Map<string, Date>();
  for (const o of outcomes) {
    if (!o.device) continue;
    const previous = latest.get(o.device.id);
    if (!previous || previous < o.packet.receivedAt) latest.set(o.device.id, o.packet.receivedAt);
  }
  return { d: [...latest.keys()], t: [...latest.values()] };
}
