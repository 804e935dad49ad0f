import pg from 'pg';
import { VERSION } from '../version.js';

/**
 * The Stellwerk version that last migrated a database, kept in `system_settings` so that an older
 * Stellwerk started on it can name the version it needs, and archives can say which version their
 * schema belongs to.
 */
export const VERSION_SETTING = 'stellwerk_version';

export async function readStoredVersion(databaseUrl: string): Promise<string | null> {
  return withClient(databaseUrl, async (client) => {
    const { rows: table } = await client.query<{ name: string | null }>(
      `SELECT to_regclass('system_settings')::text AS name`,
    );
    if (!table[0]?.name) return null;
    const { rows } = await client.query<{ value: string }>(
      `SELECT value #>> '{}' AS value FROM system_settings WHERE key = $1`,
      [VERSION_SETTING],
    );
    return rows[0]?.value ?? null;
  });
}

/** Records that this build (VERSION) migrated the database. */
export async function recordVersion(databaseUrl: string, version = VERSION): Promise<void> {
  await withClient(databaseUrl, (client) =>
    client.query(
      `INSERT INTO system_settings (key, value, updated_at) VALUES ($1, to_jsonb($2::text), now())
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = now()`,
      [VERSION_SETTING, version],
    ),
  );
}

async function withClient<T>(databaseUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
