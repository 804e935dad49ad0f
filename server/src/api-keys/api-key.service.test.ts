import { describe, expect, it } from 'vitest';
import { generateApiKey } from './api-key.service.js';

describe('generateApiKey', () => {
  it('makes swk_ keys with 256 random bits, never the same twice', () => {
    const keys = new Set(Array.from({ length: 200 }, generateApiKey));
    expect(keys.size).toBe(200);
    for (const key of keys) expect(key).toMatch(/^swk_[A-Za-z0-9_-]{43}$/);
  });
});
