import type pg from 'pg';
import type { PacketOutcome } from './parse-packet.stage.js';

/**
 * Stage 3: one transaction per batch writes everything the batch changes, in multi-row statements:
 * device states, lastSeen, the status (and resolved device) of packets that did not parse, and the
 * ingest cursor. A parsed packet is not written again: status null at or below the cursor means
 * `parsed` (see PACKET_STATUS_SQL). All or nothing: after a crash the whole batch is replayed, and
 * replaying is harmless, because a state row only moves forward (a packet never overwrites a newer
 * packet's value).
 *
 * The commit hook (the state engine, ADR 0100) runs in the same transaction, after the device
 * states and before the cursor: twin states and time-series points commit exactly with the batch.
 *
 * Cluster mode (`fenced`, ADR 0130): the transaction first locks the cursor row and refuses a batch
 * whose first packet the cursor already passed (FencedError): a processor that lost its lease can
 * never commit a batch twice.
 *
 * Failure behaviour: any error rolls the transaction back and is thrown; the pipeline decides
 * whether to retry (database unavailable) or to split the batch (one packet's data is refused).
 */

/**
 * Work inside a batch's transaction; what it returns runs after the commit (never after a rollback).
 * It runs again for every retry and split half, so it must keep nothing from a failed attempt.
 */
export type BatchCommitHook = (
  client: pg.PoolClient,
  outcomes: PacketOutcome[],
) => Promise<(() => void) | undefined>;

export const CURSOR_KEY = 'ingest_cursor';

/** A packet's effective status, for readers of `packets` aliased `p`: null = not yet processed. */
export const PACKET_STATUS_SQL = `COALESCE(p.status, CASE WHEN p.id <= (
    SELECT (value #>> '{}')::bigint FROM system_settings WHERE key = '${CURSOR_KEY}') THEN 'parsed' END)`;

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
  UPDATE packets p SET status = u.s, error = u.e, device_uuid = u.d, warnings = u.w
    FROM unnest($1::bigint[], $2::text[], $3::text[], $4::uuid[], $5::jsonb[]) AS u(id, s, e, d, w)
   WHERE p.id = u.id`;

const CURSOR_SQL = `
  INSERT INTO system_settings (key, value, updated_at) VALUES ($1, to_jsonb($2::bigint::text), now())
  ON CONFLICT (key) DO UPDATE SET value = to_jsonb(GREATEST((system_settings.value #>> '{}')::bigint, $2::bigint)::text),
                                  updated_at = now()`;

const ERROR_MAX_LENGTH = 1000;

// Locks the cursor row for the transaction: processors commit one after the other, and each sees
// whether another already passed its batch.
const FENCE_SQL = `SELECT (value #>> '{}')::bigint AS cursor FROM system_settings WHERE key = $1 FOR UPDATE`;

/** The batch's packets were processed by another node (cluster mode): this processor was deposed. */
export class FencedError extends Error {
  constructor(stored: string, first: bigint) {
    super(`the ingest cursor is at ${stored}, past this batch's first packet ${first}`);
    this.name = 'FencedError';
  }
}

export async function commitBatch(
  pool: pg.Pool,
  outcomes: PacketOutcome[],
  cursor: bigint,
  hook?: BatchCommitHook,
  fenced = false,
): Promise<(() => void) | undefined> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    if (fenced) {
      const { rows } = await client.query<{ cursor: string | null }>(FENCE_SQL, [CURSOR_KEY]);
      const stored = rows[0]?.cursor;
      const first = outcomes[0]!.packet.id;
      if (stored != null && BigInt(stored) >= first) throw new FencedError(stored, first);
    }
    const states = stateRows(outcomes);
    if (states.d.length > 0)
      await client.query(STATES_SQL, [states.d, states.k, states.v, states.t, states.p]);
    const seen = lastSeenRows(outcomes);
    if (seen.d.length > 0) await client.query(LAST_SEEN_SQL, [seen.d, seen.t]);
    // Parsed packets keep a null status (derived from the cursor) unless a codec warned about them.
    const marked = outcomes.filter((o) => o.status !== 'parsed' || (o.warnings?.length ?? 0) > 0);
    if (marked.length > 0)
      await client.query(PACKETS_SQL, [
        marked.map((o) => o.packet.id.toString()),
        marked.map((o) => (o.status === 'parsed' ? null : o.status)),
        marked.map((o) => o.error?.slice(0, ERROR_MAX_LENGTH) ?? null),
        marked.map((o) => (o.status === 'parsed' ? null : (o.device?.id ?? null))),
        marked.map((o) => (o.warnings?.length ? JSON.stringify(o.warnings) : null)),
      ]);
    const afterCommit = hook ? await hook(client, outcomes) : undefined;
    await client.query(CURSOR_SQL, [CURSOR_KEY, cursor.toString()]);
    await client.query('COMMIT');
    return afterCommit;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw error;
  } finally {
    client.release(broken);
  }
}

/** The last value per (device, key) wins: one statement cannot update the same row twice. */
function stateRows(outcomes: PacketOutcome[]) {
  // Newest first: a (device, key) already taken is superseded, so older values are never serialised.
  const taken = new Map<string, Set<string>>();
  const rows = {
    d: [] as string[],
    k: [] as string[],
    v: [] as string[],
    t: [] as Date[],
    p: [] as string[],
  };
  for (let i = outcomes.length - 1; i >= 0; i--) {
    const updates = outcomes[i]!.updates;
    for (let j = updates.length - 1; j >= 0; j--) {
      const u = updates[j]!;
      let keys = taken.get(u.deviceId);
      if (!keys) taken.set(u.deviceId, (keys = new Set()));
      let p: string | undefined;
      for (const k of Object.keys(u.states)) {
        if (keys.has(k)) continue;
        keys.add(k);
        rows.d.push(u.deviceId);
        rows.k.push(k);
        rows.v.push(JSON.stringify(u.states[k] ?? null));
        rows.t.push(u.receivedAt);
        rows.p.push((p ??= u.packetId.toString()));
      }
    }
  }
  return rows;
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
