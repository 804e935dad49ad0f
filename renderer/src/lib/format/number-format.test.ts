import { describe, expect, it } from 'vitest';
import { formatNumber, formatValue, valueFormatOf } from './number-format';

const texts = { true: 'wahr', false: 'falsch', none: '—' };

describe('number formatting', () => {
  it('writes numbers in the language’s notation with up to 3 decimals or 4 significant digits', () => {
    expect(formatNumber(4.050127, 'de')).toBe('4,05');
    expect(formatNumber(4.050127, 'en')).toBe('4.05');
    expect(formatNumber(50.376022, 'de')).toBe('50,376');
    expect(formatNumber(123.456, 'en')).toBe('123.456');
    expect(formatNumber(0.0012345, 'en')).toBe('0.001235');
    expect(formatNumber(12345.678, 'de')).toBe('12.345,678');
    expect(formatNumber(80, 'de')).toBe('80');
  });

  it('uses a state’s decimals when it has them, and none for integer states', () => {
    expect(formatNumber(4.050127, 'de', { decimals: 1 })).toBe('4,1');
    expect(formatNumber(4, 'en', { decimals: 2 })).toBe('4.00');
    expect(formatNumber(4.6, 'en', { valueType: 'integer' })).toBe('5');
    // An invalid setting is ignored rather than throwing in the middle of a page.
    expect(formatNumber(4.050127, 'en', { decimals: 42 })).toBe('4.05');
  });

  it('adds the unit after a no-break space, words for booleans and keeps text', () => {
    expect(formatValue(5.8, 'de', texts, { unit: 'bar' })).toBe('5,8\u00a0bar');
    expect(formatValue(true, 'de', texts)).toBe('wahr');
    expect(formatValue(null, 'de', texts)).toBe('—');
    expect(formatValue('water', 'de', texts, { unit: 'bar' })).toBe('water');
    expect(formatValue('4.050127', 'de', texts, { valueType: 'number' })).toBe('4,05');
    expect(formatValue({ a: 1 }, 'de', texts)).toBe('{"a":1}');
  });

  it('reads the decimals from meta.decimals, else from a random source', () => {
    expect(valueFormatOf({ unit: 'bar', valueType: 'number', meta: { decimals: 2 } })).toEqual({
      unit: 'bar',
      decimals: 2,
      valueType: 'number',
    });
    expect(valueFormatOf({ unit: null, meta: {}, source: { type: 'random', decimals: 1 } }).decimals).toBe(1);
    expect(valueFormatOf({ unit: null, meta: { decimals: 'two' } }).decimals).toBeNull();
  });
});
