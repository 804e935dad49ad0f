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

/** How a checked attempt ended: `undecided` gives its place back without counting (2FA still to come). */
export type AttemptOutcome = 'failed' | 'passed' | 'undecided';

/** A place held in each key's budget while one secret is checked; settle it exactly once. */
export interface ThrottledAttempt {
  /**
   * A failure counts (and locks a key that reaches its maximum); otherwise the place is given
   * back and, when passed, the keys in `reset` start afresh.
   */
  settle(outcome: AttemptOutcome, reset?: string[]): Promise<void>;
}

interface Held {
  key: string;
  maxFailures: number;
  windowStart: Date;
}

/**
 * Failed-login counters in PostgreSQL (`login_throttle`), so every node sees the same counts.
 * A key counts failures within a window of `lockMs`; reaching its maximum locks it for `lockMs`.
 * An attempt reserves its place (`pending`) before its secret is checked, with one conditional
 * UPDATE per key, so of any number of concurrent attempts at most the remaining budget are
 * checked. Only the key is consulted, never whether the account exists, so a locked unknown
 * e-mail and a locked known one answer alike. See docs/adr/0021-login-throttling.md.
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

  /**
   * Holds a place in every key's budget, or throws 429 LOGIN_THROTTLED with Retry-After (having
   * given back the places already taken) when a key is locked or its budget is held by failures
   * and attempts still being checked.
   */
  async reserve(keys: ThrottleKey[]): Promise<ThrottledAttempt> {
    const held: Held[] = [];
    for (const key of keys) {
      const taken = await this.take(key);
      if ('windowStart' in taken) {
        held.push({ ...key, windowStart: taken.windowStart });
        continue;
      }
      await Promise.all(held.map((h) => this.giveBack(h)));
      throw taken.refusal;
    }
    let settled = false;
    return {
      settle: async (outcome, reset = []) => {
        if (settled) return;
        settled = true;
        for (const h of held) {
          if (outcome === 'failed') await this.countFailure(h);
          else await this.giveBack(h, outcome === 'passed' && reset.includes(h.key));
        }
      },
    };
  }

  /** Runs `check` holding a place in the keys' budgets; `false` counts as a failure. */
  async guard(keys: ThrottleKey[], check: () => Promise<boolean>): Promise<boolean> {
    const attempt = await this.reserve(keys);
    let outcome: AttemptOutcome = 'failed';
    try {
      outcome = (await check()) ? 'passed' : 'failed';
      return outcome === 'passed';
    } finally {
      await attempt.settle(outcome);
    }
  }

  /** The window the place was taken in, or the refusal when the key has no room. */
  private async take({ key, maxFailures }: ThrottleKey): Promise<{ windowStart: Date } | { refusal: Error }> {
    const now = this.clock();
    const windowFloor = new Date(now.getTime() - this.limits.lockMs);
    // A row purged between the two statements is created again on the next round.
    for (let round = 0; round < 3; round++) {
      // Creates the row, or starts a new window after the old one or its lock is over.
      await this.sql(
        `INSERT INTO login_throttle AS t (key, failures, pending, window_start, locked_until)
         VALUES (?, 0, 0, ?, NULL)
         ON CONFLICT (key) DO UPDATE SET failures = 0, pending = 0, window_start = EXCLUDED.window_start,
           locked_until = NULL
         WHERE t.window_start <= ? OR t.locked_until <= EXCLUDED.window_start`,
        [key, now, windowFloor],
      );
      // One statement decides: PostgreSQL re-checks the condition on the latest row under its lock.
      const [taken] = await this.sql<{ window_start: Date | string }>(
        `UPDATE login_throttle SET pending = pending + 1
          WHERE key = ? AND (locked_until IS NULL OR locked_until <= ?) AND failures + pending < ?
          RETURNING window_start`,
        [key, now, maxFailures],
      );
      if (taken) return { windowStart: new Date(taken.window_start) };
      const [row] = await this.sql<{ locked_until: Date | string | null }>(
        `SELECT locked_until FROM login_throttle WHERE key = ?`,
        [key],
      );
      if (!row) continue;
      const lockedUntil = row.locked_until ? new Date(row.locked_until).getTime() : 0;
      // Not locked: the budget is held by attempts still being checked, which end within moments.
      const seconds = Math.max(1, Math.ceil((lockedUntil - now.getTime()) / 1000));
      return { refusal: throttled(seconds) };
    }
    return { refusal: throttled(1) };
  }

  /** The place becomes a failure; reaching the maximum locks the key for `lockMs` from now. */
  private async countFailure({ key, maxFailures, windowStart }: Held): Promise<void> {
    const now = this.clock();
    await this.sql(
      `UPDATE login_throttle SET
         pending = CASE WHEN window_start = ? THEN GREATEST(pending - 1, 0) ELSE pending END,
         failures = failures + 1,
         locked_until = CASE WHEN failures + 1 >= ? AND (locked_until IS NULL OR locked_until <= ?)
                             THEN ?::timestamptz ELSE locked_until END
       WHERE key = ?`,
      [windowStart, maxFailures, now, new Date(now.getTime() + this.limits.lockMs), key],
    );
  }

  /** Gives the place back (only in its own window: a new window starts with none held). */
  private async giveBack({ key, windowStart }: Held, reset = false): Promise<void> {
    await this.sql(
      `UPDATE login_throttle SET
         pending = CASE WHEN window_start = ? THEN GREATEST(pending - 1, 0) ELSE pending END
         ${reset ? ', failures = 0, locked_until = NULL' : ''}
       WHERE key = ?`,
      [windowStart, key],
    );
  }

  /**
   * Drops counters that hold nothing: their window and lock are over (they would start afresh
   * anyway), or nothing failed and nothing is being checked (what successful logins leave).
   */
  async purgeStale(): Promise<void> {
    const now = this.clock();
    const floor = new Date(now.getTime() - this.limits.lockMs);
    await this.sql(
      `DELETE FROM login_throttle
        WHERE (locked_until IS NULL OR locked_until <= ?)
          AND (window_start <= ? OR (failures = 0 AND pending = 0))`,
      [now, floor],
    );
  }
}

const throttled = (retryAfterSeconds: number) =>
  errors.tooManyRequests(
    'LOGIN_THROTTLED',
    'Too many failed sign-in attempts; try again later',
    retryAfterSeconds,
  );

export const emailThrottleKey = (email: string): string => `email:${email.trim().toLowerCase()}`;
export const clientThrottleKey = (ip: string): string => `ip:${clientAddress(ip)}`;
