/**
 * Calendar periods in a time zone, as instants (ms since the epoch). Pure, Intl only.
 *
 * - A period is [start, next start): a local minute, hour, day, ISO week (Monday 00:00), month or year.
 * - Days, weeks, months and years begin at local midnight; on a DST change a day is 23 or 25 hours
 *   long. A local midnight that does not exist (a zone that springs forward at 00:00) begins at the
 *   first instant after the gap; an ambiguous one at its first occurrence.
 * - Minutes and hours follow the offset in force at the instant, so the repeated local hour of an
 *   autumn DST change is two periods, as a clock on the wall shows it.
 */

import { zoneFormatter } from '../../platform/time-zone.js';

export const BASE_PERIODS = ['minute', 'hour', 'day', 'week', 'month', 'year'] as const;
export type BasePeriod = (typeof BASE_PERIODS)[number];

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

/** The zone when Intl knows it, else UTC (an account's zone is validated on save; this is a backstop). */
export function knownTimeZone(timeZone: string | null | undefined): string {
  if (!timeZone) return 'UTC';
  try {
    zoneFormatter(timeZone);
    return timeZone;
  } catch {
    return 'UTC';
  }
}

interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function localParts(at: number, timeZone: string): LocalParts {
  if (timeZone === 'UTC') {
    const d = new Date(at);
    return {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
      hour: d.getUTCHours(),
      minute: d.getUTCMinutes(),
      second: d.getUTCSeconds(),
    };
  }
  const parts: Record<string, number> = {};
  for (const p of zoneFormatter(timeZone).formatToParts(at))
    if (p.type !== 'literal' && p.type !== 'era') parts[p.type] = Number(p.value);
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour! % 24,
    minute: parts.minute!,
    second: parts.second!,
  };
}

/** Local wall time minus UTC at the instant `at`, in ms. */
export function offsetAt(at: number, timeZone: string): number {
  if (timeZone === 'UTC') return 0;
  const whole = Math.floor(at / 1000) * 1000;
  const p = localParts(whole, timeZone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - whole;
}

/** The instant a local wall time (given as if it were UTC) happens in the zone; see the file comment. */
export function localToInstant(local: number, timeZone: string): number {
  if (timeZone === 'UTC') return local;
  const candidates = [local - offsetAt(local - DAY, timeZone), local - offsetAt(local + DAY, timeZone)];
  const valid = candidates.filter((c) => offsetAt(c, timeZone) === local - c);
  // No valid candidate: the local time falls in a gap, which ends at the later candidate.
  return valid.length > 0 ? Math.min(...valid) : Math.max(...candidates);
}

/** Start of the period that contains the instant `at`. */
export function periodStart(period: BasePeriod, at: number, timeZone: string): number {
  if (period === 'minute' || period === 'hour') {
    const size = period === 'minute' ? MINUTE : HOUR;
    const offset = offsetAt(at, timeZone);
    return Math.floor((at + offset) / size) * size - offset;
  }
  const p = localParts(at, timeZone);
  let local: number;
  if (period === 'day') local = Date.UTC(p.year, p.month - 1, p.day);
  else if (period === 'week') {
    const midnight = Date.UTC(p.year, p.month - 1, p.day);
    // getUTCDay: Sunday 0 … Saturday 6; ISO weeks begin on Monday.
    local = midnight - ((new Date(midnight).getUTCDay() + 6) % 7) * DAY;
  } else if (period === 'month') local = Date.UTC(p.year, p.month - 1, 1);
  else local = Date.UTC(p.year, 0, 1);
  return localToInstant(local, timeZone);
}

/** Start of the period after the one that contains `at`. */
export function nextPeriodStart(period: BasePeriod, at: number, timeZone: string): number {
  const start = periodStart(period, at, timeZone);
  if (period === 'minute') return start + MINUTE;
  if (period === 'hour') return start + HOUR;
  // Noon of the local start date: clear of any DST change, so the local date below is the period's.
  const p = localParts(start + 12 * HOUR, timeZone);
  let local: number;
  if (period === 'day') local = Date.UTC(p.year, p.month - 1, p.day + 1);
  else if (period === 'week') local = Date.UTC(p.year, p.month - 1, p.day + 7);
  else if (period === 'month') local = Date.UTC(p.year, p.month, 1);
  else local = Date.UTC(p.year + 1, 0, 1);
  return localToInstant(local, timeZone);
}
