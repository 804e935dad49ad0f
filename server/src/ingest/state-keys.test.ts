import { describe, expect, it } from 'vitest';
import { MAX_KEY_DEPTH, MAX_KEYS_PER_ITEM, stateEntries, wholeKeys } from './state-keys.js';

const states = (item: Record<string, unknown>, keep?: Set<string>) =>
  Object.fromEntries(stateEntries(item, keep));

describe('state keys of a parsed item', () => {
  it('keeps top-level values and adds nested leaves under dotted keys, arrays under their indexes', () => {
    expect(
      states({
        volume: 12.5,
        battery: { voltage: 3.6, low: false },
        readings: [{ value: 1, at: 't1' }, { value: 2 }],
        samples: [4, null],
        label: 'x',
      }),
    ).toEqual({
      volume: 12.5,
      battery: { voltage: 3.6, low: false },
      readings: [{ value: 1, at: 't1' }, { value: 2 }],
      samples: [4, null],
      'battery.voltage': 3.6,
      'battery.low': false,
      'readings.0.value': 1,
      'readings.0.at': 't1',
      'readings.1.value': 2,
      'samples.0': 4,
      'samples.1': null,
      label: 'x',
    });
  });

  it('keeps empty objects and arrays as values, and does not split object target variables', () => {
    const keep = wholeKeys([
      { key: 'position', type: 'object' },
      { key: 'volume', type: 'number' },
    ]);
    expect(states({ alarms: [], extra: {}, position: { lat: 1, lon: 2 } }, keep)).toEqual({
      alarms: [],
      extra: {},
      position: { lat: 1, lon: 2 },
    });
  });

  it('skips reserved and empty keys and stops at the per-item limit', () => {
    expect(states({ _raw: 1, _parsed: 2, '': 3, a: { '': 4, b: 5 } })).toEqual({
      a: { '': 4, b: 5 },
      'a.b': 5,
    });
    const many = states({ list: Array.from({ length: 500 }, (_, i) => i) });
    expect(Object.keys(many)).toHaveLength(MAX_KEYS_PER_ITEM);
    // The list itself is one of them.
    expect(many[`list.${MAX_KEYS_PER_ITEM - 2}`]).toBe(MAX_KEYS_PER_ITEM - 2);
    expect(many[`list.${MAX_KEYS_PER_ITEM - 1}`]).toBeUndefined();
  });

  it('keeps anything nested deeper than the depth limit as the value at that depth', () => {
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < MAX_KEY_DEPTH + 2; i++) deep = { n: deep };
    const [key, value] = [...stateEntries(deep)].at(-1)!;
    expect(key.split('.')).toHaveLength(MAX_KEY_DEPTH);
    expect(value).toEqual({ n: { n: { leaf: 1 } } });
  });

  it('treats a __proto__ key as an ordinary state', () => {
    const item = JSON.parse('{"__proto__": {"polluted": 1}}') as Record<string, unknown>;
    expect([...stateEntries(item)]).toEqual([
      ['__proto__', { polluted: 1 }],
      ['__proto__.polluted', 1],
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
  it('never lets a parsed key into the reserved _meta prefix', () => {
    expect(states({ _meta: { rssi: 0 }, '_meta.snr': 9, _metadata: 1, level: 2 })).toEqual({
      _metadata: 1,
      level: 2,
    });
  });
});
