import { describe, expect, it } from 'vitest';
import { AppError } from '../platform/errors.js';
import { deviceFilterSql, deviceSearchSql, parseDeviceFilter } from './virtual-device.filter.js';

describe('device filter syntax', () => {
  it('parses title, tag and key-value conditions with NOT', () => {
    const conditions = parseDeviceFilter({
      'filter[title]': 'Pump',
      'filter[tag][not]': ['old', 'broken'],
      'filter[kv.room]': 12,
      page: 1,
    });
    expect(conditions).toEqual([
      { field: 'title', not: false, value: 'Pump' },
      { field: 'tag', not: true, value: 'old' },
      { field: 'tag', not: true, value: 'broken' },
      { field: 'kv', key: 'room', not: false, value: '12' },
    ]);
  });

  it('refuses unknown filter names', () => {
    expect(() => parseDeviceFilter({ 'filter[colour]': 'red' })).toThrow(AppError);
    expect(() => parseDeviceFilter({ 'filter[tag][nope]': 'x' })).toThrow(AppError);
  });

  it('builds parameterised SQL only (values never enter the text)', () => {
    const sql = deviceFilterSql(
      'd',
      parseDeviceFilter({ "filter[kv.a'b]": "x'; drop", 'filter[title][not]': '50%' }),
    );
    expect(sql).toEqual([
      { sql: 'd.key_value_data @> ?::jsonb', params: ['{"a\'b":"x\'; drop"}'] },
      { sql: 'd.title NOT ILIKE ?', params: ['%50\\%%'] },
    ]);
  });

  it('adds the conditions the indexes answer: the search text for a title, JSON containment for key-value data', () => {
    const search =
      "(d.title || chr(31) || d.device_id || chr(31) || coalesce(d.dev_eui, '') || chr(31) || coalesce(d.external_id, '') || chr(31) || coalesce(d.reference_id, ''))";
    const [title, number, flag, big, array, negated] = deviceFilterSql(
      'd',
      parseDeviceFilter({
        'filter[title]': 'Pump 5',
        'filter[kv.room]': ['12.50', 'true', '12345678901234567890', '[1, 2]'],
        'filter[kv.room][not]': '12',
      }),
    );
    expect(title).toEqual({ sql: `${search} ILIKE ? AND d.title ILIKE ?`, params: ['%Pump 5%', '%Pump 5%'] });
    // A number or boolean is looked for as JSON text and as itself, written as given (no rounding).
    expect(number).toEqual({
      sql: 'd.key_value_data @> ?::jsonb OR d.key_value_data @> ?::jsonb',
      params: ['{"room":"12.50"}', '{"room":12.50}'],
    });
    expect(flag!.params).toEqual(['{"room":"true"}', '{"room":true}']);
    expect(big!.params[1]).toBe('{"room":12345678901234567890}');
    // An array or object reads as its JSON text: compared as text.
    expect(array).toEqual({ sql: '(d.key_value_data ->> ?) = ?', params: ['room', '[1, 2]'] });
    expect(negated).toEqual({
      sql: 'NOT (d.key_value_data @> ?::jsonb OR d.key_value_data @> ?::jsonb)',
      params: ['{"room":"12"}', '{"room":12}'],
    });
  });

  it('searches title, device_id, EUI, external id and reference id as one text with one escaped pattern', () => {
    expect(deviceSearchSql('d', '50%\u001f')).toEqual({
      sql: "(d.title || chr(31) || d.device_id || chr(31) || coalesce(d.dev_eui, '') || chr(31) || coalesce(d.external_id, '') || chr(31) || coalesce(d.reference_id, '')) ILIKE ?",
      params: ['%50\\%%'],
    });
  });
});
