import { describe, expect, it } from 'vitest';
import { AppError } from '../platform/errors.js';
import { CredentialFailureLimiter } from './credential-failures.js';

describe('CredentialFailureLimiter', () => {
  it('refuses an address after its budget of failures, with Retry-After, until the window ends', () => {
    let now = 1_000_000;
    const limiter = new CredentialFailureLimiter(3, 60_000, () => now);
    for (let i = 0; i < 3; i++) {
      limiter.assertAllowed('10.0.0.1');
      limiter.record('10.0.0.1');
    }
    let refused: unknown;
    try {
      limiter.assertAllowed('10.0.0.1');
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('API_LIMIT_REACHED');
    expect((refused as AppError).headers['retry-after']).toBe('60');
    expect(() => limiter.assertAllowed('10.0.0.2')).not.toThrow();
    now += 60_000;
    expect(() => limiter.assertAllowed('10.0.0.1')).not.toThrow();
  });
});
