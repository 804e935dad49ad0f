import { describe, expect, it } from 'vitest';
import { deviceKeys } from './device-keys';

describe('device keys for a twin state', () => {
  const declared = [
    { key: 'temperature', valueType: 'number', unit: '°C' },
    { key: 'open', valueType: 'boolean', unit: null },
  ];

  it("offers the driver's keys with type and unit before the device sent anything", () => {
    expect(deviceKeys([], declared)).toEqual([
      { key: 'open', sent: false, valueType: 'boolean', unit: null },
      { key: 'temperature', sent: false, valueType: 'number', unit: '°C' },
    ]);
  });

  it('merges sent keys with declared ones, keeping sent keys the driver does not declare', () => {
    const keys = deviceKeys(
      [
        { key: '_raw', value: '{}' },
        { key: 'temperature', value: 21.5 },
        { key: 'humidity', value: 40 },
        { key: '_parsed', value: {} },
      ],
      declared,
    );
    expect(keys.map((k) => k.key)).toEqual(['humidity', 'open', 'temperature', '_parsed', '_raw']);
    expect(keys.find((k) => k.key === 'temperature')).toEqual({
      key: 'temperature',
      value: 21.5,
      sent: true,
      valueType: 'number',
      unit: '°C',
    });
    expect(keys.find((k) => k.key === 'humidity')).toMatchObject({ sent: true, valueType: null, unit: null });
    expect(keys.find((k) => k.key === 'open')).toMatchObject({ sent: false, valueType: 'boolean' });
  });

  it('offers nothing for a device without a driver that has not sent anything', () => {
    expect(deviceKeys([], [])).toEqual([]);
  });
});
