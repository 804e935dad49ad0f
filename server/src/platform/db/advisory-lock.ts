import pg from 'pg';

/** Held while migrations (and the first start's bootstrap) run: by starting nodes and `stellwerk migrate`. */
export const MIGRATION_LOCK = 0x5354_4c57; // "STLW"

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

/**
 * Leadership for background work one node at a time runs (timers): a session advisory lock held on
 * its own connection for as long as that connection lives. Nodes without it keep asking; a node
 * that dies or loses its connection releases it, and another node takes over at its next attempt.
 */
export class AdvisoryLease {
  private client: pg.Client | undefined;
  private held = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly key: number,
  ) {}

  /** True while this process holds the lock (taking it when it is free). */
  async acquire(): Promise<boolean> {
    if (this.held && this.client) return true;
    if (!this.client) {
      const client = new pg.Client({ connectionString: this.databaseUrl });
      client.on('error', () => this.forget(client));
      await client.connect();
      this.client = client;
    }
    const { rows } = await this.client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [
      this.key,
    ]);
    this.held = rows[0]?.ok === true;
    return this.held;
  }

  async release(): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.client = undefined;
    this.held = false;
    // Ending the session releases the lock.
    await client.end().catch(() => undefined);
  }

  private forget(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.held = false;
    void client.end().catch(() => undefined);
  }
}
