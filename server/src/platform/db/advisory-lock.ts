import pg from 'pg';

/**
 * Runs `work` while holding a PostgreSQL advisory lock on its own connection, so nodes that
 * start together on one database migrate and bootstrap one after the other.
 */
export async function withAdvisoryLock<T>(
  databaseUrl: string,
  key: number,
  work: () => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [key]);
    return await work();
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [key]).catch(() => undefined);
    await client.end();
  }
}
