import { describe, expect, it } from 'vitest';
import { stateDeclarations } from './device-state-types.js';

describe('stateDeclarations', () => {
  const declare = stateDeclarations([
    { key: 'temperature', type: 'number', unit: '°C' },
    { key: 'open', type: 'boolean' },
    { key: 'label', type: 'string', unit: '' },
    { key: 'position', type: 'object' },
  ]);

  it('names the type and unit of a declared key whose value fits', () => {
    expect(declare('temperature', 21.5)).toEqual({ valueType: 'number', unit: '°C', warning: null });
    expect(declare('open', false)).toEqual({ valueType: 'boolean', unit: null, warning: null });
    expect(declare('label', 'boiler')).toEqual({ valueType: 'string', unit: null, warning: null });
    expect(declare('position', { lat: 1 })).toMatchObject({ warning: null });
  });

  it('warns when a number key holds text, keeping what the value was', () => {
    expect(declare('temperature', '21.5')).toEqual({
      valueType: 'number',
      unit: '°C',
      warning: 'value "21.5" does not fit value type number',
    });
    expect(declare('temperature', 'abc').warning).toBe('value "abc" does not fit value type number');
    expect(declare('open', 1).warning).toBe('value 1 does not fit value type boolean');
    expect(declare('position', 3).warning).toBe('value 3 does not fit value type object');
  });

  it('accepts null for any type: a device may report a value as missing', () => {
    expect(declare('temperature', null).warning).toBeNull();
  });

  it('declares nothing for keys the driver does not name', () => {
    for (const key of ['_raw', '_parsed', '_meta.rssi', 'humidity'])
      expect(declare(key, 'x')).toEqual({ valueType: null, unit: null, warning: null });
  });
});
