/**
 * How the console writes a point in time: one format for every page, in one time zone (the user's
 * choice, by default the account's; time-zone.svelte.ts), always with the zone's label so a reader
 * never has to guess (`26 Nov 2026, 08:15:03 UTC`, `26. Nov. 2026, 09:15:03 MEZ`).
 */

/** English uses the British order (day month year, 24 hours); German its own. */
const LOCALES: Record<string, string> = { en: 'en-GB', de: 'de-DE' };
const localeOf = (language: string) => LOCALES[language] ?? language;

const cache = new Map<string, Intl.DateTimeFormat>();

function formatter(language: string, timeZone: string, withDate: boolean): Intl.DateTimeFormat {
  const key = `${language}|${timeZone}|${withDate}`;
  let found = cache.get(key);
  if (!found) {
    found = new Intl.DateTimeFormat(localeOf(language), {
      ...(withDate ? { year: 'numeric', month: 'short', day: 'numeric' } : {}),
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZone,
      timeZoneName: 'short',
    });
    cache.set(key, found);
  }
  return found;
}

const toDate = (value: string | number | Date) => (value instanceof Date ? value : new Date(value));

/** Date and time with the zone's label; an unreadable value is returned as it came. */
export function formatDateTime(value: string | number | Date, language: string, timeZone: string): string {
  const date = toDate(value);
  return Number.isNaN(date.getTime()) ? String(value) : formatter(language, timeZone, true).format(date);
}

/** Time of day with the zone's label, for values that arrived today (a live list). */
export function formatTime(value: string | number | Date, language: string, timeZone: string): string {
  const date = toDate(value);
  return Number.isNaN(date.getTime()) ? String(value) : formatter(language, timeZone, false).format(date);
}

const axisCache = new Map<string, Intl.DateTimeFormat>();

/**
 * A chart axis tick in the zone: the time of day for spans up to two days, else day and month
 * (the zone's label is on the axis name, not on every tick).
 */
export function formatAxisTime(value: number, language: string, timeZone: string, spanMs: number): string {
  const short = spanMs <= 2 * 24 * 3600 * 1000;
  const key = `${language}|${timeZone}|${short}`;
  let found = axisCache.get(key);
  if (!found) {
    found = new Intl.DateTimeFormat(
      localeOf(language),
      short
        ? { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone }
        : { day: 'numeric', month: 'short', timeZone },
    );
    axisCache.set(key, found);
  }
  return found.format(value);
}

/** The zone's short label in the language (`MEZ`, `CET`, `UTC`, `GMT+9`) at that moment. */
export function timeZoneLabel(timeZone: string, language: string, at: Date = new Date()): string {
  const part = formatter(language, timeZone, false)
    .formatToParts(at)
    .find((p) => p.type === 'timeZoneName');
  return part?.value ?? timeZone;
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

/**
 * "3 minutes ago" in the console's language; `now` is passed so a ticking clock re-renders it. For
 * moments that have happened (last seen, last fired, updated): one ahead of `now` reads "now", since
 * it means the server's clock is ahead of this browser's, or a value pushed live is newer than the
 * page's last tick, never "in 2 seconds".
 */
export function relativeTime(iso: string, language: string, now = Date.now()): string {
  const seconds = Math.min(0, Math.round((new Date(iso).getTime() - now) / 1000));
  const format = new Intl.RelativeTimeFormat(language, { numeric: 'auto' });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === 'second')
      return format.format(Math.round(seconds / size), unit);
  }
  return format.format(0, 'second');
}

/** An IANA zone this browser knows, in its canonical spelling, or undefined. */
export function knownTimeZone(zone: string | null | undefined): string | undefined {
  if (!zone) return undefined;
  try {
    return new Intl.DateTimeFormat('en', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}
