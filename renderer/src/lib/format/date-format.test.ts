import { describe, expect, it } from 'vitest';
import {
  formatAxisTime,
  formatDateTime,
  formatTime,
  knownTimeZone,
  relativeTime,
  timeZoneLabel,
} from './date-format';

const AT = '2026-11-26T08:15:03Z';

describe('date formatting', () => {
  it('writes date and time in the given zone with the zone’s label', () => {
    expect(formatDateTime(AT, 'en', 'UTC')).toBe('26 Nov 2026, 08:15:03 UTC');
    expect(formatDateTime(AT, 'de', 'Europe/Berlin')).toBe('26. Nov. 2026, 09:15:03 MEZ');
    expect(formatDateTime(AT, 'en', 'Europe/Berlin')).toBe('26 Nov 2026, 09:15:03 CET');
    expect(formatTime(AT, 'de', 'Europe/Berlin')).toBe('09:15:03 MEZ');
  });

  it('follows summer time and names it', () => {
    expect(formatDateTime('2026-07-01T12:00:00Z', 'de', 'Europe/Berlin')).toBe('1. Juli 2026, 14:00:00 MESZ');
    expect(timeZoneLabel('Europe/Berlin', 'de', new Date('2026-07-01T12:00:00Z'))).toBe('MESZ');
  });

  it('returns an unreadable value as it came', () => {
    expect(formatDateTime('not a date', 'de', 'UTC')).toBe('not a date');
  });

  it('writes axis ticks as times for short spans and as days for long ones', () => {
    const at = Date.parse(AT);
    expect(formatAxisTime(at, 'de', 'Europe/Berlin', 3600_000)).toBe('09:15');
    expect(formatAxisTime(at, 'en', 'UTC', 30 * 24 * 3600_000)).toBe('26 Nov');
  });

  it('knows IANA zones in their canonical spelling and refuses others', () => {
    expect(knownTimeZone('europe/berlin')).toBe('Europe/Berlin');
    expect(knownTimeZone('Mars/Olympus')).toBeUndefined();
    expect(knownTimeZone('')).toBeUndefined();
  });
});

describe('relativeTime', () => {
  const now = Date.parse('2026-11-28T10:00:00Z');
  it('tells how long ago a moment was, in the console language', () => {
    expect(relativeTime('2026-11-28T09:57:00Z', 'en', now)).toBe('3 minutes ago');
    expect(relativeTime('2026-11-28T09:59:50Z', 'de', now)).toBe('vor 10 Sekunden');
  });
  it('reads a moment ahead of the browser clock as now', () => {
    expect(relativeTime('2026-11-28T10:00:02Z', 'en', now)).toBe('now');
    expect(relativeTime('2026-11-28T10:05:00Z', 'de', now)).toBe('jetzt');
  });
});
