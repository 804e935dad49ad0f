import { describe, expect, it } from 'vitest';
import type { TimeSeriesPoint } from '../timeseries.types.js';
import { dedupeByStateAndTime, toLine } from './line-protocol.js';

const point = (over: Partial<TimeSeriesPoint>): TimeSeriesPoint => ({
  accountId: 'acc',
  twinId: 'twin',
  stateId: 'st',
  stateKey: 'flow rate,m3=h',
  time: new Date(1_700_000_000_123),
  value: 12.5,
  text: null,
  ...over,
});

describe('line protocol', () => {
  it('writes a numeric point with escaped tags and millisecond time', () => {
    expect(toLine(point({}), 'states')).toBe(
      'states,account_id=acc,state_id=st,state_key=flow\\ rate\\,m3\\=h,twin_id=twin value=12.5 1700000000123',
    );
  });

  it('writes texts as string fields, empty values as is_null, huge numbers without "e+"', () => {
    expect(toLine(point({ value: null, text: 'say "hi" \\o/' }), 'states')).toContain(
      ' text="say \\"hi\\" \\\\o/" ',
    );
    expect(toLine(point({ value: null, text: null }), 'states')).toContain(' is_null=1 ');
    expect(toLine(point({ value: 1e21 }), 'states')).toContain(' value=1e21 ');
  });

  it('carries texts as a label for VictoriaMetrics, which stores numbers only', () => {
    expect(toLine(point({ value: null, text: 'on, off', stateKey: 'k' }), 'states', 'victoria-metrics')).toBe(
      'states,account_id=acc,state_id=st,state_key=k,text=on\\,\\ off,twin_id=twin is_text=1 1700000000123',
    );
  });

  it('keeps one point per state and millisecond, oldest first', () => {
    const a = point({ value: 1 });
    const b = point({ value: 2 });
    const c = point({ time: new Date(0) });
    expect(dedupeByStateAndTime([a, b, c])).toEqual([c, b]);
  });
});
