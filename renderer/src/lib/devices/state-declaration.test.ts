import { describe, expect, it } from 'vitest';
import { fitsType, stateDeclarations } from './state-declaration';

describe('device state declarations', () => {
  const declare = stateDeclarations([
    { key: 'temperature', type: 'number', unit: '°C' },
    { key: 'open', type: 'boolean' },
    { key: 'label', type: 'string', unit: '' },
  ]);

  it("gives a driver variable's type and unit", () => {
    expect(declare('temperature', 21.5)).toEqual({ type: 'number', unit: '°C', mismatch: false });
    expect(declare('open', true)).toEqual({ type: 'boolean', unit: null, mismatch: false });
    expect(declare('label', 'x')).toEqual({ type: 'string', unit: null, mismatch: false });
  });

  it('marks text in a number variable as a mismatch', () => {
    expect(declare('temperature', '21.5')).toMatchObject({ mismatch: true, unit: '°C' });
    expect(declare('temperature', 'abc')?.mismatch).toBe(true);
    expect(declare('open', 0)?.mismatch).toBe(true);
  });

  it('declares nothing for states the driver does not name', () => {
    expect(declare('_raw', '{}')).toBeUndefined();
    expect(declare('_meta.rssi', -80)).toBeUndefined();
    expect(declare('humidity', 40)).toBeUndefined();
  });

  it('lets null fit every type, and objects include arrays', () => {
    expect(fitsType(null, 'number')).toBe(true);
    expect(fitsType([1, 2], 'object')).toBe(true);
    expect(fitsType(Number.NaN, 'number')).toBe(false);
  });
});
