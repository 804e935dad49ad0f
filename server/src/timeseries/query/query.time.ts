import { zoneFormatter } from '../../platform/time-zone.js';
/**
 * Time arithmetic shared by the SQL compiler and the in-memory evaluator, so both bucket alike.
 * Buckets are `date_bin` buckets anchored at Monday 2000-01-03 00:00 (weeks start on Monday);
 * with a time zone they are anchored on the local wall clock, and a local bucket start that does
 * not exist or exists twice (daylight-saving changes) resolves the way PostgreSQL resolves
 * `timestamp AT TIME ZONE`: a skipped time uses the offset before the change, a repeated time the
 * offset after it.
 */

export const BUCKET_ORIGIN_MS = Date.UTC(2000, 0, 3);
/** The same origin as SQL text: a UTC instant, or a local wall-clock time for zoned buckets. */
export const BUCKET_ORIGIN_UTC = '2000-01-03T00:00:00Z';
export const BUCKET_ORIGIN_LOCAL = '2000-01-03 00:00:00';

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** Parses an ISO-8601 timestamp; without an offset it is UTC. Null when malformed or not a real date. */
export function parseIsoTime(text: string): Date | null {
  const m = ISO.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone = 'Z'] = m;
  const fields = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)] as const;
  const ms = Number(frac.padEnd(3, '0').slice(0, 3));
  const local = Date.UTC(...fields, ms);
  const check = new Date(local);
  const real =
    check.getUTCFullYear() === fields[0] &&
    check.getUTCMonth() === fields[1] &&
    check.getUTCDate() === fields[2] &&
    fields[3] < 24 &&
    fields[4] < 60 &&
    fields[5] < 60;
  if (!real || fields[0] < 1) return null;
  let offsetMin = 0;
  if (zone !== 'Z') {
    const digits = zone.replace(':', '');
    const hours = Number(digits.slice(1, 3));
    const minutes = Number(digits.slice(3, 5));
    if (hours > 15 || minutes > 59) return null;
    offsetMin = (digits[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
  }
  return new Date(local - offsetMin * 60_000);
}

/** IANA zone names only (`Europe/Berlin`, `UTC`): PostgreSQL reads `+02:00` POSIX-style, inverted. */
export function isKnownTimeZone(zone: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/.test(zone) || zone.length > 64) return false;
  try {
    zoneFormatter(zone);
    return true;
  } catch {
    return false;
  }
}

const offsetCache = new Map<string, number>();
/** Offsets change on quarter-hour marks at the finest, so one lookup per zone and quarter hour. */
const SLOT_MS = 15 * 60_000;

/** Milliseconds to add to a UTC instant to get the wall-clock time in `zone`. */
export function zoneOffsetMs(zone: string, utcMs: number): number {
  const slot = Math.floor(utcMs / SLOT_MS);
  const key = `${zone}|${slot}`;
  const cached = offsetCache.get(key);
  if (cached !== undefined) return cached;
  const at = slot * SLOT_MS;
  const parts = Object.fromEntries(
    zoneFormatter(zone)
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  const year = Number(parts.year) * (parts.era === 'BC' || parts.era === 'B' ? -1 : 1);
  const wall = Date.UTC(
    year,
    Number(parts.month) - 1,
    Number(parts.day),
    Number(parts.hour),
    Number(parts.minute),
    Number(parts.second),
  );
  const offset = wall - at;
  if (offsetCache.size > 100_000) offsetCache.clear();
  offsetCache.set(key, offset);
  return offset;
}

/** The UTC instant of a wall-clock time in `zone`, resolved like PostgreSQL (see the top of the file). */
export function wallToUtcMs(zone: string, wallMs: number): number {
  const before = zoneOffsetMs(zone, wallMs - 86_400_000);
  const after = zoneOffsetMs(zone, wallMs + 86_400_000);
  const viaBefore = wallMs - before;
  const viaAfter = wallMs - after;
  const beforeFits = zoneOffsetMs(zone, viaBefore) === before;
  const afterFits = zoneOffsetMs(zone, viaAfter) === after;
  if (afterFits) return viaAfter;
  if (beforeFits) return viaBefore;
  return viaBefore;
}

/** Start of the bucket of `widthMs` that `timeMs` falls in, in UTC or on the wall clock of `zone`. */
export function bucketStart(timeMs: number, widthMs: number, zone: string | null): number {
  if (!zone) return BUCKET_ORIGIN_MS + Math.floor((timeMs - BUCKET_ORIGIN_MS) / widthMs) * widthMs;
  const wall = timeMs + zoneOffsetMs(zone, timeMs);
  const start = BUCKET_ORIGIN_MS + Math.floor((wall - BUCKET_ORIGIN_MS) / widthMs) * widthMs;
  return wallToUtcMs(zone, start);
}

/** The bucket width as a PostgreSQL interval literal (bound as a parameter). */
export const intervalText = (widthMs: number): string => `${widthMs / 1000} seconds`;
