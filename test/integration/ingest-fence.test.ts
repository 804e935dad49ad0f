import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitBatch, CURSOR_KEY, FencedError } from '../../server/src/ingest/commit-batch.stage.js';
import type { PacketOutcome } from '../../server/src/ingest/parse-packet.stage.js';
import { createTestDatabase } from './support/database.js';

/**
 * Cluster mode's fenced commit (ADR 0130): a processor whose batch the ingest cursor already passed
 * (another node processed it after this one lost its lease) commits nothing; a batch above the cursor
 * commits and moves it.
 */

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let pool: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
});

afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const outcome = (id: bigint): PacketOutcome => ({
  packet: {
    id,
    connectorId: '0b6f6c1e-3f2a-4c1d-9a57-5c3f0e2b7d11',
    deviceKey: 'meter-1',
    payload: Buffer.from('{}'),
    source: 'mqtt',
    receivedAt: new Date(),
  },
  device: null,
  status: 'unknown-device',
  error: null,
  updates: [],
});

const cursor = async () =>
  (
    await pool.query<{ c: string }>(`SELECT value #>> '{}' AS c FROM system_settings WHERE key = $1`, [
      CURSOR_KEY,
    ])
  ).rows[0]?.c;

describe('fenced batch commits', () => {
  it('refuses a batch the cursor passed, and commits one above it', async () => {
    await pool.query(
      `INSERT INTO system_settings (key, value, updated_at) VALUES ($1, to_jsonb('100'::text), now())
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
      [CURSOR_KEY],
    );
    let hookRan = false;
    const hook = async () => {
      hookRan = true;
      return undefined;
    };
    await expect(commitBatch(pool, [outcome(90n), outcome(120n)], 120n, hook, true)).rejects.toBeInstanceOf(
      FencedError,
    );
    expect(hookRan, 'the state engine never ran for a fenced batch').toBe(false);
    expect(await cursor()).toBe('100');
    // The next batch above the cursor commits and moves it.
    await commitBatch(pool, [outcome(101n), outcome(130n)], 130n, hook, true);
    expect(hookRan).toBe(true);
    expect(await cursor()).toBe('130');
  });
});
