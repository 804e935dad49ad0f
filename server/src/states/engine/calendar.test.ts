import { describe, expect, it } from 'vitest';
import { knownTimeZone, nextPeriodStart, offsetAt, periodStart, type BasePeriod } from './calendar.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const bounds = (period: BasePeriod, instant: string, zone: string) => {
  const start = periodStart(period, at(instant), zone);
  return [iso(start), iso(nextPeriodStart(period, at(instant), zone))];
};

describe('calendar periods in UTC', () => {
  it('minute, hour, day, ISO week (Monday), month and year around a month end', () => {
    const t = '2026-01-31T23:59:30.500Z';
    expect(bounds('minute', t, 'UTC')).toEqual(['2026-01-31T23:59:00.000Z', '2026-02-01T00:00:00.000Z']);
    expect(bounds('hour', t, 'UTC')).toEqual(['2026-01-31T23:00:00.000Z', '2026-02-01T00:00:00.000Z']);
    expect(bounds('day', t, 'UTC')).toEqual(['2026-01-31T00:00:00.000Z', '2026-02-01T00:00:00.000Z']);
    // 2026-01-31 is a Saturday: its week began on Monday the 26th.
    expect(bounds('week', t, 'UTC')).toEqual(['2026-01-26T00:00:00.000Z', '2026-02-02T00:00:00.000Z']);
    expect(bounds('month', t, 'UTC')).toEqual(['2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z']);
    expect(bounds('year', t, 'UTC')).toEqual(['2026-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
  });

  it('a Monday begins its own week; a Sunday belongs to the week before', () => {
    expect(bounds('week', '2026-03-30T00:00:00Z', 'UTC')[0]).toBe('2026-03-30T00:00:00.000Z');
    expect(bounds('week', '2026-03-29T23:59:59Z', 'UTC')[0]).toBe('2026-03-23T00:00:00.000Z');
  });

  it('the leap day 2028-02-29 is a day of February; March follows it', () => {
    expect(bounds('day', '2028-02-29T12:00:00Z', 'UTC')).toEqual([
      '2028-02-29T00:00:00.000Z',
      '2028-03-01T00:00:00.000Z',
    ]);
    expect(bounds('month', '2028-02-29T23:59:59Z', 'UTC')).toEqual([
      '2028-02-01T00:00:00.000Z',
      '2028-03-01T00:00:00.000Z',
    ]);
    expect(bounds('month', '2027-02-15T00:00:00Z', 'UTC')[1]).toBe('2027-03-01T00:00:00.000Z');
    expect(bounds('year', '2028-02-29T00:00:00Z', 'UTC')[1]).toBe('2029-01-01T00:00:00.000Z');
  });

  it('year ends and 31-day months roll into the right next month', () => {
    expect(bounds('month', '2026-12-31T23:59:59Z', 'UTC')[1]).toBe('2027-01-01T00:00:00.000Z');
    expect(bounds('month', '2026-03-31T10:00:00Z', 'UTC')[1]).toBe('2026-04-01T00:00:00.000Z');
    expect(bounds('day', '2026-04-30T23:00:00Z', 'UTC')[1]).toBe('2026-05-01T00:00:00.000Z');
  });
});

describe('calendar periods in Europe/Berlin', () => {
  const berlin = 'Europe/Berlin';

  it('knows the offsets around both DST changes of 2026', () => {
    expect(offsetAt(at('2026-03-29T00:59:59Z'), berlin)).toBe(3_600_000);
    expect(offsetAt(at('2026-03-29T01:00:00Z'), berlin)).toBe(7_200_000);
    expect(offsetAt(at('2026-10-25T00:59:59Z'), berlin)).toBe(7_200_000);
    expect(offsetAt(at('2026-10-25T01:00:00Z'), berlin)).toBe(3_600_000);
  });

  it('the spring-forward day 2026-03-29 has 23 hours', () => {
    const [start, end] = bounds('day', '2026-03-29T12:00:00Z', berlin);
    expect([start, end]).toEqual(['2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z']);
    expect(Date.parse(end!) - Date.parse(start!)).toBe(23 * 3_600_000);
    // The local day before still has 24 hours in CET.
    expect(bounds('day', '2026-03-28T12:00:00Z', berlin)).toEqual([
      '2026-03-27T23:00:00.000Z',
      '2026-03-28T23:00:00.000Z',
    ]);
  });

  it('the fall-back day 2026-10-25 has 25 hours and its repeated hour is two periods', () => {
    const [start, end] = bounds('day', '2026-10-25T12:00:00Z', berlin);
    expect([start, end]).toEqual(['2026-10-24T22:00:00.000Z', '2026-10-25T23:00:00.000Z']);
    expect(Date.parse(end!) - Date.parse(start!)).toBe(25 * 3_600_000);
    // 02:30 CEST, then 02:30 CET an hour later.
    expect(bounds('hour', '2026-10-25T00:30:00Z', berlin)).toEqual([
      '2026-10-25T00:00:00.000Z',
      '2026-10-25T01:00:00.000Z',
    ]);
    expect(bounds('hour', '2026-10-25T01:30:00Z', berlin)).toEqual([
      '2026-10-25T01:00:00.000Z',
      '2026-10-25T02:00:00.000Z',
    ]);
  });

  it('the week across the spring change runs Monday to Monday local time (167 hours)', () => {
    const [start, end] = bounds('week', '2026-03-29T10:00:00Z', berlin);
    expect([start, end]).toEqual(['2026-03-22T23:00:00.000Z', '2026-03-29T22:00:00.000Z']);
    expect(bounds('week', '2026-03-29T22:00:00Z', berlin)[0]).toBe('2026-03-29T22:00:00.000Z');
  });

  it('months and years begin at local midnight (the UTC previous evening)', () => {
    // 2026-01-31T23:30Z is already 1 February, 00:30 in Berlin.
    expect(bounds('month', '2026-01-31T23:30:00Z', berlin)).toEqual([
      '2026-01-31T23:00:00.000Z',
      '2026-02-28T23:00:00.000Z',
    ]);
    expect(bounds('month', '2026-03-15T00:00:00Z', berlin)).toEqual([
      '2026-02-28T23:00:00.000Z',
      '2026-03-31T22:00:00.000Z',
    ]);
    expect(bounds('month', '2026-10-15T00:00:00Z', berlin)[1]).toBe('2026-10-31T23:00:00.000Z');
    expect(bounds('year', '2026-12-31T23:30:00Z', berlin)).toEqual([
      '2026-12-31T23:00:00.000Z',
      '2027-12-31T23:00:00.000Z',
    ]);
  });

  it('the leap day in Berlin', () => {
    expect(bounds('day', '2028-02-29T23:30:00Z', berlin)[0]).toBe('2028-02-29T23:00:00.000Z');
    expect(bounds('day', '2028-02-29T22:59:59Z', berlin)).toEqual([
      '2028-02-28T23:00:00.000Z',
      '2028-02-29T23:00:00.000Z',
    ]);
    expect(bounds('month', '2028-02-10T00:00:00Z', berlin)[1]).toBe('2028-02-29T23:00:00.000Z');
  });
});

describe('other zones', () => {
  it('a day whose local midnight does not exist begins after the gap (Havana, 2026-03-08)', () => {
    // Cuba moves its clocks from 00:00 to 01:00 CDT, i.e. at 05:00 UTC.
    expect(bounds('day', '2026-03-08T12:00:00Z', 'America/Havana')).toEqual([
      '2026-03-08T05:00:00.000Z',
      '2026-03-09T04:00:00.000Z',
    ]);
  });

  it('half-hour offsets (Asia/Kolkata) shift hours and days by 30 minutes', () => {
    expect(bounds('hour', '2026-06-01T10:10:00Z', 'Asia/Kolkata')[0]).toBe('2026-06-01T09:30:00.000Z');
    expect(bounds('day', '2026-06-01T10:10:00Z', 'Asia/Kolkata')[0]).toBe('2026-05-31T18:30:00.000Z');
  });

  it('an unknown zone falls back to UTC', () => {
    expect(knownTimeZone('Mars/Olympus')).toBe('UTC');
    expect(knownTimeZone('Europe/Berlin')).toBe('Europe/Berlin');
    expect(knownTimeZone(null)).toBe('UTC');
  });
});
