import { describe, expect, it } from 'vitest';
import { niceStep, timeTicks, valueTicks } from './chart-ticks';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const iso = (ticks: number[]) => ticks.map((at) => new Date(at).toISOString().slice(0, 16));

describe('value ticks', () => {
  it('steps by 1, 2 or 5 × 10ⁿ', () => {
    expect([137, 100, 12, 1, 0.37, 4500, 23_000].map((span) => niceStep(span, 5))).toEqual([
      50, 20, 5, 0.2, 0.1, 1000, 5000,
    ]);
    expect(niceStep(137, 10)).toBe(20);
    expect(niceStep(0, 5)).toBe(1);
  });

  it('widens the bounds to multiples of the step, never an uneven last tick', () => {
    expect(valueTicks(0, 137, 5)).toEqual({ min: 0, max: 150, interval: 50 });
    expect(valueTicks(0, 137, 8)).toEqual({ min: 0, max: 140, interval: 20 });
    expect(valueTicks(-7.3, 12.9, 5)).toEqual({ min: -10, max: 15, interval: 5 });
    expect(valueTicks(1013.2, 1016.8, 5)).toEqual({ min: 1013, max: 1017, interval: 1 });
  });

  it("keeps a state's own bounds when a nice step divides them", () => {
    expect(valueTicks(0, 120, 4, true)).toEqual({ min: 0, max: 120, interval: 20 });
    expect(valueTicks(0, 100, 5, true)).toEqual({ min: 0, max: 100, interval: 20 });
    expect(valueTicks(-40, 60, 5, true)).toEqual({ min: -40, max: 60, interval: 20 });
    expect(valueTicks(0, 137, 5, true)).toEqual({ min: 0, max: 150, interval: 50 });
  });

  it('prints decimal steps without binary noise', () => {
    expect(valueTicks(0.13, 0.71, 5)).toEqual({ min: 0, max: 0.8, interval: 0.2 });
    expect(valueTicks(4.41, 4.47, 5)).toEqual({ min: 4.4, max: 4.48, interval: 0.02 });
  });

  it('gives a flat line room around it', () => {
    expect(valueTicks(74, 74, 5)).toEqual({ min: 65, max: 85, interval: 5 });
    expect(valueTicks(0, 0, 5)).toEqual({ min: -1, max: 1, interval: 0.5 });
  });
});

describe('time ticks', () => {
  const now = Date.parse('2026-11-28T10:17:23.456Z');

  it('puts an hour window on whole ten minutes, never at its odd ends', () => {
    expect(iso(timeTicks(now - HOUR, now, 6, 'UTC'))).toEqual([
      '2026-11-28T09:20',
      '2026-11-28T09:30',
      '2026-11-28T09:40',
      '2026-11-28T09:50',
      '2026-11-28T10:00',
      '2026-11-28T10:10',
    ]);
  });

  it('puts a day on whole hours of the chosen zone', () => {
    // Kolkata is 5:30 ahead: its 00:00, 06:00 … are UTC's hh:30.
    const ticks = timeTicks(now - DAY, now, 6, 'Asia/Kolkata');
    expect(iso(ticks)).toEqual([
      '2026-11-27T12:30',
      '2026-11-27T18:30',
      '2026-11-28T00:30',
      '2026-11-28T06:30',
    ]);
    const steps = ticks.slice(1).map((at, index) => at - ticks[index]!);
    expect(new Set(steps)).toEqual(new Set([6 * HOUR]));
  });

  it('puts a week on midnights and a month on Mondays of the zone', () => {
    expect(iso(timeTicks(now - 7 * DAY, now, 8, 'Europe/Berlin'))).toEqual([
      '2026-11-21T23:00',
      '2026-11-22T23:00',
      '2026-11-23T23:00',
      '2026-11-24T23:00',
      '2026-11-25T23:00',
      '2026-11-26T23:00',
      '2026-11-27T23:00',
    ]);
    // 2026-11-02 is a Monday; the Mondays of a 30-day window in Berlin.
    expect(iso(timeTicks(now - 30 * DAY, now, 6, 'Europe/Berlin'))).toEqual([
      '2026-11-01T23:00',
      '2026-11-08T23:00',
      '2026-11-15T23:00',
      '2026-11-22T23:00',
    ]);
  });

  it('keeps whole local days across a daylight-saving change', () => {
    // Berlin leaves summer time on 25 October 2026: the midnights move from 22:00 to 23:00 UTC.
    const from = Date.parse('2026-10-23T12:00:00Z');
    expect(iso(timeTicks(from, from + 4 * DAY, 5, 'Europe/Berlin'))).toEqual([
      '2026-10-23T22:00',
      '2026-10-24T22:00',
      '2026-10-25T23:00',
      '2026-10-26T23:00',
    ]);
  });

  it('puts a year on first days of months', () => {
    expect(iso(timeTicks(now - 365 * DAY, now, 6, 'UTC'))).toEqual([
      '2026-01-01T00:00',
      '2026-03-01T00:00',
      '2026-05-01T00:00',
      '2026-07-01T00:00',
      '2026-09-01T00:00',
      '2026-11-01T00:00',
    ]);
  });
});
