import { describe, expect, it } from 'vitest';
import { localTime, spreadsheetTime, timeCell } from './export-columns.js';
import { resolveRange } from './export-range.js';

const iso = (r: { from: Date; to: Date }) => [r.from.toISOString(), r.to.toISOString()];

describe('export time ranges', () => {
  it('takes the previous calendar day across the autumn DST change as 25 hours', () => {
    const now = new Date('2026-10-26T08:00:00Z');
    expect(iso(resolveRange({ relative: 'previousDay' }, 'Europe/Berlin', now))).toEqual([
      '2026-10-24T22:00:00.000Z',
      '2026-10-25T23:00:00.000Z',
    ]);
  });

  it('takes the previous ISO week (Monday 00:00) and month in the zone', () => {
    const now = new Date('2026-11-04T12:00:00Z');
    expect(iso(resolveRange({ relative: 'previousWeek' }, 'Europe/Berlin', now))).toEqual([
      '2026-10-25T23:00:00.000Z', // Monday 26 October 00:00, winter time since the day before
      '2026-11-01T23:00:00.000Z',
    ]);
    expect(iso(resolveRange({ relative: 'previousMonth' }, 'America/New_York', now))).toEqual([
      '2026-10-01T04:00:00.000Z',
      '2026-11-01T04:00:00.000Z',
    ]);
  });

  it('goes back a calendar month to the last day of a shorter one, at the same wall-clock time', () => {
    const now = new Date('2026-03-31T10:00:00Z'); // 12:00 in Berlin (summer time since the 29th)
    expect(iso(resolveRange({ relative: 'lastMonth' }, 'Europe/Berlin', now))).toEqual([
      '2026-02-28T11:00:00.000Z',
      '2026-03-31T10:00:00.000Z',
    ]);
    expect(
      iso(resolveRange({ relative: 'lastDay' }, 'Europe/Berlin', new Date('2026-03-29T12:00:00Z'))),
    ).toEqual(['2026-03-28T13:00:00.000Z', '2026-03-29T12:00:00.000Z']);
  });

  it('reads absolute ranges as wall-clock times of the zone, or as instants when they carry an offset', () => {
    expect(
      iso(resolveRange({ from: '2026-10-31T00:00', to: '2026-11-01' }, 'America/New_York', new Date())),
    ).toEqual(['2026-10-31T04:00:00.000Z', '2026-11-01T04:00:00.000Z']);
    expect(
      iso(resolveRange({ from: '2026-10-31T00:00:00Z', to: '2026-11-01T00:00:00+01:00' }, 'UTC', new Date())),
    ).toEqual(['2026-10-31T00:00:00.000Z', '2026-10-31T23:00:00.000Z']);
  });

  it('writes times on the wall clock of the zone with their offset, the repeated hour told apart', () => {
    expect(localTime(Date.parse('2026-10-25T00:30:00Z'), 'Europe/Berlin')).toBe('2026-10-25T02:30:00+02:00');
    expect(localTime(Date.parse('2026-10-25T01:30:00Z'), 'Europe/Berlin')).toBe('2026-10-25T02:30:00+01:00');
    expect(localTime(Date.parse('2026-11-01T05:00:00.250Z'), 'America/New_York')).toBe(
      '2026-11-01T01:00:00.250-04:00',
    );
    expect(localTime(Date.parse('2026-01-01T00:00:00Z'), 'UTC')).toBe('2026-01-01T00:00:00+00:00');
  });

  it('writes spreadsheet times as the wall clock of the zone without offset, milliseconds after the decimal separator', () => {
    expect(spreadsheetTime(Date.parse('2026-10-25T00:30:00Z'), 'Europe/Berlin', ',')).toBe(
      '2026-10-25 02:30:00',
    );
    expect(spreadsheetTime(Date.parse('2026-11-01T05:00:00.250Z'), 'America/New_York', ',')).toBe(
      '2026-11-01 01:00:00,250',
    );
    expect(spreadsheetTime(Date.parse('2026-01-01T00:00:00.5Z'), 'UTC', '.')).toBe('2026-01-01 00:00:00.500');
    const at = Date.parse('2026-06-01T10:00:00Z');
    expect(timeCell({ decimalSeparator: ',' })(at, 'UTC')).toBe('2026-06-01T10:00:00+00:00');
    expect(timeCell({ decimalSeparator: ',', timeFormat: 'spreadsheet' })(at, 'UTC')).toBe(
      '2026-06-01 10:00:00',
    );
  });
});
