import { describe, expect, it } from 'vitest';
import { describeFilter, filterOf, rowsOf } from './group-filter';

describe('smart group filters', () => {
  it('reads a saved filter back into rows that produce the same filter', () => {
    const saved = {
      'filter[tag]': ['pump', 'north'],
      'filter[kv.floor][not]': '2',
      'filter[title]': 'Basin',
    };
    const rows = rowsOf(saved);
    expect(rows).toEqual([
      { field: 'tag', key: '', negate: false, value: 'pump' },
      { field: 'tag', key: '', negate: false, value: 'north' },
      { field: 'kv', key: 'floor', negate: true, value: '2' },
      { field: 'title', key: '', negate: false, value: 'Basin' },
    ]);
    expect(filterOf([...rows, { field: 'kv', key: ' ', negate: false, value: 'x' }])).toEqual({
      'filter[tag]': ['pump', 'north'],
      'filter[kv.floor][not]': ['2'],
      'filter[title]': ['Basin'],
    });
    expect(describeFilter(saved)).toBe('tag = pump, tag = north, floor ≠ 2, title ∋ Basin');
  });
});
