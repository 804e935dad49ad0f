import { describe, expect, it } from 'vitest';
import { planQuery } from '../../../../server/src/timeseries/query/query.analyze';
import {
  chartNumber,
  chartQuery,
  chartQueryText,
  csvFileName,
  isTruncated,
  pointsByState,
} from './chart-query';

const A = '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const B = '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c';
const to = Date.parse('2026-11-26T10:05:00Z');

describe('the query a chart runs', () => {
  it('reads raw points of several states over a short absolute window', () => {
    const query = chartQuery([A, B], { from: to - 5 * 60_000, to }, 'Europe/Berlin');
    expect(query.bucket).toBeNull();
    expect(chartQueryText(query)).toBe(
      `SELECT time, twin.title AS twin, state.key AS state_key, state.title AS state, state.unit AS unit, value, ` +
        `state.id AS state_id WHERE state.id IN ('${A}', '${B}') AND time >= '2026-11-26T10:00:00.000Z' ` +
        `AND time <= '2026-11-26T10:05:00.000Z' ORDER BY time LIMIT 50000`,
    );
  });

  it('asks for mean, min and max per bucket over long windows, days in the console zone', () => {
    const day = chartQueryText(chartQuery([A], { from: to - 86_400_000, to }, 'Europe/Berlin'));
    expect(day).toContain('SELECT bucket(5m) AS time,');
    expect(day).toContain('mean(value) AS mean, min(value) AS min, max(value) AS max, state.id AS state_id');
    const year = chartQueryText(chartQuery([A], { from: to - 365 * 86_400_000, to }, 'Europe/Berlin'));
    expect(year).toContain("SELECT bucket(1d, 'Europe/Berlin') AS time,");
    expect(chartQueryText(chartQuery([A], { from: to - 365 * 86_400_000, to }, 'UTC'))).toContain(
      'SELECT bucket(1d) AS time,',
    );
  });

  it('is accepted by the server’s query planner in both forms, with the columns the chart reads', () => {
    const raw = planQuery(chartQueryText(chartQuery([A, B], { from: to - 60_000, to }, 'UTC')), new Date(to));
    expect(raw.columns.map((column) => column.name)).toEqual([
      'time',
      'twin',
      'state_key',
      'state',
      'unit',
      'value',
      'state_id',
    ]);
    const means = planQuery(
      chartQueryText(chartQuery([A], { from: to - 365 * 86_400_000, to }, 'Europe/Berlin')),
      new Date(to),
    );
    expect(means.columns.map((column) => column.name)).toEqual([
      'time',
      'twin',
      'state_key',
      'state',
      'unit',
      'mean',
      'min',
      'max',
      'state_id',
    ]);
  });

  it('refuses anything but state ids, so no text reaches the query', () => {
    expect(() => chartQueryText(chartQuery(["x' OR 1=1", A], { from: 0, to }, 'UTC'))).toThrow(
      /not a state id/,
    );
    expect(() => chartQueryText(chartQuery([], { from: 0, to }, 'UTC'))).toThrow(/needs a state/);
  });
});

describe('the answer as chart points', () => {
  it('groups raw rows by state, skipping text and null values', () => {
    const columns = ['time', 'twin', 'state_key', 'state', 'unit', 'value', 'state_id'].map((name) => ({
      name,
    }));
    const rows = [
      ['2026-11-26T10:00:01.000Z', 'Pump', 'flow', 'Flow', 'm³/h', 4.5, A],
      ['2026-11-26T10:00:02.000Z', 'Pump', 'pressure', 'Pressure', 'bar', 2.25, B],
      ['2026-11-26T10:00:03.000Z', 'Pump', 'flow', 'Flow', 'm³/h', null, A],
      ['2026-11-26T10:00:04.000Z', 'Pump', 'flow', 'Flow', 'm³/h', 5, A],
    ];
    const points = pointsByState({ columns, rows });
    expect(points.get(A)).toEqual([
      [Date.parse('2026-11-26T10:00:01Z'), 4.5],
      [Date.parse('2026-11-26T10:00:04Z'), 5],
    ]);
    expect(points.get(B)).toEqual([[Date.parse('2026-11-26T10:00:02Z'), 2.25]]);
  });

  it('keeps mean, min and max of aggregated rows, and drops empty buckets', () => {
    const columns = ['time', 'mean', 'min', 'max', 'state_id'].map((name) => ({ name }));
    const rows = [
      ['2026-11-26T10:00:00.000Z', 3, 1, 5, A],
      ['2026-11-26T10:05:00.000Z', null, null, null, A],
    ];
    expect(pointsByState({ columns, rows }).get(A)).toEqual([[Date.parse('2026-11-26T10:00:00Z'), 3, 1, 5]]);
  });

  it('says when the answer stopped at its limit', () => {
    const columns = [{ name: 'time' }];
    expect(isTruncated({ columns, rows: [], meta: { rowCount: 50_000, limit: 50_000 } })).toBe(true);
    expect(isTruncated({ columns, rows: [], meta: { rowCount: 12, limit: 50_000 } })).toBe(false);
  });

  it('reads booleans as 1/0 and numeric text as numbers for live values', () => {
    expect([true, false, '4.5', 'on', 7].map(chartNumber)).toEqual([1, 0, 4.5, null, 7]);
  });
});

describe('the CSV file name', () => {
  it('names the chart and its window in UTC', () => {
    expect(csvFileName('Pump 1 · Flow, Druck (bar)', { from: to - 5 * 60_000, to })).toBe(
      'stellwerk-pump-1-flow-druck-bar-20261126T1000Z-20261126T1005Z.csv',
    );
    expect(csvFileName('→', { from: 0, to: 60_000 })).toBe(
      'stellwerk-chart-19700101T0000Z-19700101T0001Z.csv',
    );
  });
});
