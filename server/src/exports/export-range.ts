import { localToInstant, offsetAt, periodStart } from '../states/engine/calendar.js';
import type { ExportRange } from './export-plan.types.js';

/**
 * The instants [from, to) of an export range in `timeZone`, at `now`:
 * - `lastDay` / `lastWeek` / `lastMonth`: from the same wall-clock time one day, week or calendar
 *   month before `now` (on the 31st, a month back is the last day of a shorter month), up to `now`;
 *   across a DST change such a "day" is 23 or 25 hours, as on the wall clock;
 * - `previousDay` / `previousWeek` / `previousMonth`: the whole calendar day, ISO week (Monday
 *   00:00) or month before the one `now` is in;
 * - absolute: local wall-clock times in the zone (`2026-10-01T00:00`); a time with an offset or
 *   `Z` is that instant.
 */
export function resolveRange(range: ExportRange, timeZone: string, now: Date): { from: Date; to: Date } {
  if ('from' in range) {
    return {
      from: new Date(localInstant(range.from, timeZone)),
      to: new Date(localInstant(range.to, timeZone)),
    };
  }
  const at = now.getTime();
  switch (range.relative) {
    case 'lastDay':
      return { from: new Date(shiftLocal(at, timeZone, { days: 1 })), to: now };
    case 'lastWeek':
      return { from: new Date(shiftLocal(at, timeZone, { days: 7 })), to: now };
    case 'lastMonth':
      return { from: new Date(shiftLocal(at, timeZone, { months: 1 })), to: now };
    case 'previousDay':
    case 'previousWeek':
    case 'previousMonth': {
      const period =
        range.relative === 'previousDay' ? 'day' : range.relative === 'previousWeek' ? 'week' : 'month';
      const end = periodStart(period, at, timeZone);
      return { from: new Date(periodStart(period, end - 1, timeZone)), to: new Date(end) };
    }
  }
}

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/** Whether `text` is a local date-time `resolveRange` reads, or an ISO instant. */
export function isRangeTime(text: string): boolean {
  return (
    LOCAL.test(text) ||
    (/^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:\d{2})$/.test(text) && !Number.isNaN(Date.parse(text)))
  );
}

function localInstant(text: string, timeZone: string): number {
  const m = LOCAL.exec(text);
  if (!m) return Date.parse(text);
  const local = Date.UTC(
    Number(m[1]),
    Number(m[2]) - 1,
    Number(m[3]),
    Number(m[4] ?? 0),
    Number(m[5] ?? 0),
    Number(m[6] ?? 0),
  );
  return localToInstant(local, timeZone);
}

/** The instant at the wall-clock time `days` or `months` before `at` in the zone. */
function shiftLocal(at: number, timeZone: string, by: { days?: number; months?: number }): number {
  const local = new Date(at + offsetAt(at, timeZone));
  const [y, mo, d] = [local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate()];
  const time = local.getTime() - Date.UTC(y, mo, d);
  let day: number;
  if (by.months) {
    const lastDay = new Date(Date.UTC(y, mo - by.months + 1, 0)).getUTCDate();
    day = Date.UTC(y, mo - by.months, Math.min(d, lastDay));
  } else day = Date.UTC(y, mo, d - (by.days ?? 0));
  return localToInstant(day + time, timeZone);
}
