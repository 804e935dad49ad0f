import { errors } from '../errors.js';

const MAX_DEPTH = 32;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Rejects input PostgreSQL or JavaScript cannot hold safely, before validation sees it:
 * NUL characters (PostgreSQL text refuses them), non-finite or unsafe numbers, nesting deeper
 * than MAX_DEPTH and prototype keys. Iterative, so hostile nesting cannot overflow the stack.
 */
export function assertSafeInput(value: unknown, location: string): void {
  const stack: Array<{ value: unknown; depth: number; path: string }> = [{ value, depth: 0, path: '' }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    const v = item.value;
    if (typeof v === 'string') {
      if (v.includes('\u0000'))
        throw errors.validation(`NUL characters are not allowed (${location}${item.path})`, [
          { location, path: item.path },
        ]);
      continue;
    }
    if (typeof v === 'number') {
      if (!Number.isFinite(v) || Math.abs(v) > Number.MAX_SAFE_INTEGER * 1e6) {
        throw errors.validation(`Number out of range (${location}${item.path})`, [
          { location, path: item.path },
        ]);
      }
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (item.depth >= MAX_DEPTH)
      throw errors.validation(`Input nested deeper than ${MAX_DEPTH} levels`, [
        { location, path: item.path },
      ]);
    for (const [key, child] of Object.entries(v)) {
      if (FORBIDDEN_KEYS.has(key))
        throw errors.validation(`Key "${key}" is not allowed`, [{ location, path: `${item.path}/${key}` }]);
      if (key.includes('\u0000'))
        throw errors.validation(`NUL characters are not allowed in keys`, [{ location, path: item.path }]);
      stack.push({ value: child, depth: item.depth + 1, path: `${item.path}/${key}` });
    }
  }
}
