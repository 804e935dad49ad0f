import { errors } from '../platform/errors.js';

/**
 * Counts refused credentials per client address. Invalid credentials also use up the address's API
 * rate budget, but only after their lookup; this budget stops a client that sends a fresh random
 * token each time before its lookups reach the database. In memory per node: a guard, not an
 * account lock.
 */
export class CredentialFailureLimiter {
  private readonly failures = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws 429 API_LIMIT_REACHED while the address has used up its budget. */
  assertAllowed(address: string): void {
    const entry = this.failures.get(address);
    if (!entry) return;
    const now = this.now();
    if (entry.resetAt <= now) {
      this.failures.delete(address);
      return;
    }
    if (entry.count >= this.maxFailures) {
      throw errors.tooManyRequests(
        'API_LIMIT_REACHED',
        'Too many requests with invalid credentials from this address; retry later',
        Math.max(1, Math.ceil((entry.resetAt - now) / 1000)),
      );
    }
  }

  record(address: string): void {
    const now = this.now();
    if (this.failures.size > 100_000) this.evictExpired(now);
    const entry = this.failures.get(address);
    if (!entry || entry.resetAt <= now)
      this.failures.set(address, { count: 1, resetAt: now + this.windowMs });
    else entry.count++;
  }

  private evictExpired(now: number): void {
    for (const [address, entry] of this.failures) if (entry.resetAt <= now) this.failures.delete(address);
    // Still full: a flood of distinct addresses; forgetting is safer than growing without bound.
    if (this.failures.size > 100_000) this.failures.clear();
  }
}
