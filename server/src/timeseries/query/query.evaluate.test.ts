import { describe, expect, it } from 'vitest';
import { planQuery } from './query.analyze.js';
import type { StateRow } from './query.columns.js';
import { compareText, evaluatePlan, likeRegex } from './query.evaluate.js';
import { bucketStart, parseIsoTime } from './query.time.js';

const state = (id: string, key: string, extra: Partial<StateRow> = {}): StateRow => ({
  stateId: id,
  stateKey: key,
  stateTitle: key,
  stateUnit: null,
  twinId: 't1',
  twinTitle: 'Pump',
  twinReferenceId: null,
  twinHierarchy: 'Site / Pump',
  twinPath: ['t0', 't1'],
  twinTags: ['pump'],
  twinProperties: { site: 'Nord' },
  ...extra,
});
const states = new Map([
  ['a', state('a', 'flow')],
  ['b', state('b', 'level', { twinProperties: {} })],
]);
const at = (iso: string) => new Date(iso);
const points = [
  { stateId: 'a', time: at('2026-01-01T00:10:00Z'), value: 1, text: null },
  { stateId: 'a', time: at('2026-01-01T00:50:00Z'), value: 3, text: null },
  { stateId: 'a', time: at('2026-01-01T01:10:00Z'), value: null, text: 'x' },
  { stateId: 'b', time: at('2026-01-01T00:20:00Z'), value: 10, text: null },
  { stateId: 'unknown', time: at('2026-01-01T00:20:00Z'), value: 99, text: null },
];
const run = (text: string) => evaluatePlan(planQuery(text, new Date('2026-01-02T00:00:00Z')), states, points);

describe('in-memory evaluator', () => {
  it('buckets, aggregates and orders like SQL', () => {
    expect(
      run('SELECT bucket(1h) AS h, mean(value), count(*), count(value), last(text) ORDER BY h DESC'),
    ).toEqual([
      [at('2026-01-01T01:00:00Z'), null, 1, 0, 'x'],
      [at('2026-01-01T00:00:00Z'), 14 / 3, 3, 3, null],
    ]);
  });

  it('treats comparisons with NULL as unknown, also under NOT', () => {
    expect(run('SELECT count(*) WHERE NOT value > 2')).toEqual([[1]]);
    expect(run("SELECT count(*) WHERE NOT property.site = 'Nord'")).toEqual([[0]]);
    expect(run('SELECT count(*) WHERE property.site IS NULL')).toEqual([[1]]);
  });

  it('answers one row for an aggregate over nothing, and no rows for raw queries over nothing', () => {
    expect(run("SELECT count(*), sum(value) WHERE state.key = 'none'")).toEqual([[0, null]]);
    expect(run("SELECT value WHERE state.key = 'none'")).toEqual([]);
  });

  it('puts NULL last ascending and first descending', () => {
    expect(run('SELECT value ORDER BY value').map((r) => r[0])).toEqual([1, 3, 10, null]);
    expect(run('SELECT value ORDER BY value DESC').map((r) => r[0])).toEqual([null, 10, 3, 1]);
  });
});

describe('time and text helpers', () => {
  it('parses ISO timestamps strictly, UTC without an offset', () => {
    expect(parseIsoTime('2026-01-31')).toEqual(at('2026-01-31T00:00:00Z'));
    expect(parseIsoTime('2026-01-31T12:00:00+02:00')).toEqual(at('2026-01-31T10:00:00Z'));
    expect(parseIsoTime('2026-01-31 12:00:00.123456Z')).toEqual(at('2026-01-31T12:00:00.123Z'));
    for (const bad of ['2026-02-30', '2026-13-01', '31.01.2026', '2026-01-01T25:00', 'now'])
      expect(parseIsoTime(bad)).toBeNull();
  });

  it('anchors weeks on Monday and zoned days on local midnight across DST', () => {
    expect(new Date(bucketStart(Date.parse('2026-01-01T12:00:00Z'), 7 * 86_400_000, null))).toEqual(
      at('2025-12-29T00:00:00Z'),
    );
    const day = 86_400_000;
    expect(new Date(bucketStart(Date.parse('2026-03-29T12:00:00Z'), day, 'Europe/Berlin'))).toEqual(
      at('2026-03-28T23:00:00Z'),
    );
    expect(new Date(bucketStart(Date.parse('2026-03-30T12:00:00Z'), day, 'Europe/Berlin'))).toEqual(
      at('2026-03-29T22:00:00Z'),
    );
    // The repeated hour 02:00–03:00 on 25 October resolves to the later (standard-time) instant.
    expect(new Date(bucketStart(Date.parse('2026-10-25T00:30:00Z'), 3_600_000, 'Europe/Berlin'))).toEqual(
      at('2026-10-25T01:00:00Z'),
    );
  });

  it('orders text by code point and matches LIKE patterns with escapes', () => {
    expect(['b', 'B', '\u{1F600}', '\uFFFD', 'a'].sort(compareText)).toEqual([
      'B',
      'a',
      'b',
      '\uFFFD',
      '\u{1F600}',
    ]);
    expect(likeRegex('50\\% of _x%', false).test('50% of ax and more')).toBe(true);
    expect(likeRegex('50\\% of _x%', false).test('500 of ax')).toBe(false);
    expect(likeRegex('a.b(c)', false).test('a.b(c)')).toBe(true);
    expect(likeRegex('PUMP%', true).test('pump 3')).toBe(true);
    expect(likeRegex('FAIL-%', false).test('FAIL-07')).toBe(true);
    expect(likeRegex('a-\\-b', false).test('a--b')).toBe(true);
  });
});
