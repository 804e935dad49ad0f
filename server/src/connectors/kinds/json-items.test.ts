import { describe, expect, it } from 'vitest';
import { AppError } from '../../platform/errors.js';
import { jsonItems } from './json-items.js';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error instanceof AppError ? error.code : 'not an AppError';
  }
  return undefined;
};

describe('jsonItems', () => {
  it('makes one item per object with its own JSON as payload; numeric ids become text', () => {
    const items = jsonItems([{ device_id: 'a', v: 1 }, { device_id: 7 }]);
    expect(items.map((i) => i.deviceKey)).toEqual(['a', '7']);
    expect(JSON.parse(items[0]!.payload.toString())).toEqual({ device_id: 'a', v: 1 });
    expect(jsonItems({ serial: 'x' }, 'serial')[0]!.deviceKey).toBe('x');
  });

  it('accepts 50 items and refuses 51 naming the limit', () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ device_id: `d${i}` }));
    expect(jsonItems(many(50))).toHaveLength(50);
    expect(codeOf(() => jsonItems(many(51)))).toBe('TOO_MANY_ITEMS');
  });

  it.each([
    [[], 'INVALID_PAYLOAD'],
    [[null], 'INVALID_PAYLOAD'],
    ['text', 'INVALID_PAYLOAD'],
    [[[{ device_id: 'a' }]], 'INVALID_PAYLOAD'],
    [{ value: 1 }, 'DEVICE_ID_MISSING'],
    [{ device_id: '  ' }, 'DEVICE_ID_MISSING'],
    [{ device_id: 'x'.repeat(201) }, 'DEVICE_ID_MISSING'],
    [{ device_id: Number.NaN }, 'DEVICE_ID_MISSING'],
  ])('refuses %j with %s', (body, code) => {
    expect(codeOf(() => jsonItems(body))).toBe(code);
  });
});
