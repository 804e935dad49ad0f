import { describe, expect, it } from 'vitest';
import { isNotOlder } from './live-merge';

describe('a live change against a value read from the API', () => {
  it('stands when it is newer or as new, or the read value was never set', () => {
    expect(isNotOlder('2026-11-22T09:00:01.000Z', '2026-11-22T09:00:00.000Z')).toBe(true);
    expect(isNotOlder('2026-11-22T09:00:00.000Z', '2026-11-22T09:00:00.000Z')).toBe(true);
    expect(isNotOlder('2026-11-22T09:00:00.000Z', null)).toBe(true);
    expect(isNotOlder('2026-11-22T09:00:00.000Z', undefined)).toBe(true);
  });

  it('gives way to a newer read value, also across time zone notations', () => {
    expect(isNotOlder('2026-11-22T09:00:00.000Z', '2026-11-22T09:00:00.001Z')).toBe(false);
    expect(isNotOlder('2026-11-22T09:00:00.000Z', '2026-11-22T10:00:00.500+01:00')).toBe(false);
  });
});
