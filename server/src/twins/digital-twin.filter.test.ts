import { describe, expect, it } from 'vitest';
import { parseDeviceFilter } from '../devices/virtual-device.filter.js';
import { splitStatusFilter, statusFilterSql, twinFilterSql } from './digital-twin.filter.js';

describe('twin filter SQL', () => {
  it('reads kv conditions from the custom properties, with NOT, and keeps values out of the text', () => {
    const sql = twinFilterSql(
      't',
      parseDeviceFilter({
        "filter[kv.fl'oor]": "2'; drop table digital_twins",
        'filter[tag][not]': 'old',
        'filter[title]': '50%',
      }),
    );
    expect(sql).toEqual([
      { sql: 't.custom_properties @> ?::jsonb', params: ['{"fl\'oor":"2\'; drop table digital_twins"}'] },
      { sql: 'NOT (t.tags @> ARRAY[?]::text[])', params: ['old'] },
      { sql: 't.title ILIKE ?', params: ['%50\\%%'] },
    ]);
    expect(twinFilterSql('t', parseDeviceFilter({ 'filter[kv.a][not]': 'x' }))).toEqual([
      { sql: 'NOT (t.custom_properties @> ?::jsonb)', params: ['{"a":"x"}'] },
    ]);
  });
});

describe('twin status filter', () => {
  it('takes filter[status] out of the shared syntax and binds the statuses as parameters', () => {
    const { statuses, rest } = splitStatusFilter({
      'filter[status]': ['inactive', 'active'],
      'filter[tag]': 'a',
    });
    expect(statuses).toEqual(['active', 'inactive']);
    expect(parseDeviceFilter(rest)).toEqual([{ field: 'tag', not: false, value: 'a' }]);
    expect(statusFilterSql('t', statuses)).toEqual({
      sql: 't.status IN (?)',
      params: [['active', 'inactive']],
    });
    expect(statusFilterSql('t', splitStatusFilter({}).statuses)).toBeNull();
  });
});
