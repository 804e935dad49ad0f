import type { EntityManager } from '@mikro-orm/postgresql';
import { errors } from '../platform/errors.js';
import { clientAddress } from '../platform/http/client-address.js';

export interface ThrottleKey {
  /** `email:<address>` or `ip:<address>`. */
  key: string;
  /** Failures within one window that lock the key. */
  maxFailures: number;
}

export interface ThrottleLimits {
  lockMs: number;
}

/**
 * Failed-login counters in PostgreSQL (`login_throttle`), so every node sees the same counts.
 * A key counts failures within a window of `lockMs`; reaching its maximum locks it for `lockMs`.
 * Only the key is consulted, never whether the account exists, so a locked unknown e-mail and a
 * locked known one answer alike. See docs/adr/0021-login-throttling.md.
 */
export class LoginThrottleService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly clock: () => Date,
    private readonly limits: ThrottleLimits,
  ) {}

  private sql<T>(query: string, params: unknown[]): Promise<T[]> {
    return this.em().getConnection().execute<T[]>(query, params);
  }

  /** Throws 429 LOGIN_THROTTLED with Retry-After when any of the keys is locked. */
  async assertOpen(keys: ThrottleKey[]): Promise<void> {
    const now = this.clock();
    const [row] = await this.sql<{ until: Date | string | null }>(
      `SELECT max(locked_until) AS until FROM login_throttle WHERE key IN (?) AND locked_until > ?`,
      [keys.map((k) => k.key), now],
    );
    if (!row?.until) return;
    const seconds = Math.max(1, Math.ceil((new Date(row.until).getTime() - now.getTime()) / 1000));
    throw errors.tooManyRequests('LOGIN_THROTTLED', 'Too many failed logins; try again later', seconds);
  }

  /** Counts one failure against every key; a key that reaches its maximum is locked. */
  async recordFailure(keys: ThrottleKey[]): Promise<void> {
    const now = this.clock();
    const lockMs = Math.trunc(this.limits.lockMs);
    // A failure after the window or after an expired lock starts a new count.
    const fresh = `(t.window_start <= EXCLUDED.window_start - ${lockMs} * interval '1 millisecond'
                    OR t.locked_until <= EXCLUDED.window_start)`;
    for (const { key, maxFailures } of keys) {
      const [row] = await this.sql<{ failures: number }>(
        `INSERT INTO login_throttle AS t (key, failures, window_start, locked_until)
         VALUES (?, 1, ?, NULL)
         ON CONFLICT (key) DO UPDATE SET
           failures = CASE WHEN ${fresh} THEN 1 ELSE t.failures + 1 END,
           window_start = CASE WHEN ${fresh} THEN EXCLUDED.window_start ELSE t.window_start END,
           locked_until = CASE WHEN ${fresh} THEN NULL ELSE t.locked_until END
         RETURNING failures`,
        [key, now],
      );
      if (row && row.failures >= maxFailures) {
        await this.sql(`UPDATE login_throttle SET locked_until = ? WHERE key = ?`, [
          new Date(now.getTime() + lockMs),
          key,
        ]);
      }
    }
  }

  /** Forgets a key's failures (a successful login resets its e-mail counter). */
  async reset(key: string): Promise<void> {
    await this.sql(`DELETE FROM login_throttle WHERE key = ?`, [key]);
  }

  /** Drops counters whose window and lock are over; they would start afresh anyway. */
  async purgeStale(): Promise<void> {
    const floor = new Date(this.clock().getTime() - this.limits.lockMs);
    await this.sql(
      `DELETE FROM login_throttle WHERE window_start <= ? AND (locked_until IS NULL OR locked_until <= ?)`,
      [floor, this.clock()],
    );
  }
}

export const emailThrottleKey = (email: string): string => `email:${email.trim().toLowerCase()}`;
export const clientThrottleKey = (ip: string): string => `ip:${clientAddress(ip)}`;
