import pg from 'pg';

/** Advisory lock namespace of the time-series module (two-key form; never collides with one-key locks). */
export const TIMESERIES_LOCK_SPACE = 0x5453; // "TS"

/** Stable 31-bit key for a name (FNV-1a), the second half of a two-key advisory lock. */
export function lockKey(name: string): number {
  let hash = 0x811c9dc5;
  for (const char of Buffer.from(name)) {
    hash ^= char;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash & 0x7fffffff;
}

/**
 * A session-level advisory lock held on its own connection: one holder cluster-wide (one writer
 * per target, one retention job). When that connection drops, PostgreSQL releases the lock and
 * `held` turns false, so the holder stops and another node may take over.
 */
export class ClusterLock {
  private client: pg.Client | undefined;
  private locked = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly key: number,
  ) {}

  get held(): boolean {
    return this.locked;
  }

  /** Takes the lock if it is free; true when this process holds it (now or already). */
  async tryAcquire(): Promise<boolean> {
    if (this.locked) return true;
    if (!this.client) {
      const client = new pg.Client({ connectionString: this.databaseUrl });
      const lost = () => {
        this.locked = false;
        if (this.client === client) this.client = undefined;
      };
      client.on('error', lost);
      client.on('end', lost);
      try {
        await client.connect();
      } catch (error) {
        lost();
        throw error;
      }
      this.client = client;
    }
    const { rows } = await this.client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [
      TIMESERIES_LOCK_SPACE,
      this.key,
    ]);
    this.locked = rows[0]?.ok === true;
    return this.locked;
  }

  async release(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.locked = false;
    // Closing the session releases its advisory locks.
    await client?.end().catch(() => undefined);
  }
}
