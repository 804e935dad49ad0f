// PostgreSQL's text output of timestamptz (DateStyle ISO): `2026-11-25 21:40:00.123456+00`, with
// an offset of hours, hours:minutes or hours:minutes:seconds.
const TIMESTAMPTZ =
  /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?([+-])(\d\d)(?::(\d\d))?(?::(\d\d))?$/;

/**
 * A timestamptz in PostgreSQL's text form as a Date (milliseconds; finer digits are cut, as Date
 * holds no more). Read by hand because the engine's own parser takes the non-ISO form only through
 * its slow legacy path, and a chart reads thousands of them per request. Anything else (years
 * before 1000 or after 9999, BC, infinity) goes to the engine's parser as before.
 */
export function parsePgTimestamptz(text: string): Date {
  const m = TIMESTAMPTZ.exec(text);
  // Date.UTC maps years 0–99 to 1900–1999.
  if (!m || m[1]! < '1000') return new Date(text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));
  const millis = m[7] ? Number(m[7].padEnd(3, '0').slice(0, 3)) : 0;
  const offsetSeconds =
    (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 3600 + Number(m[10] ?? 0) * 60 + Number(m[11] ?? 0));
  const local = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, millis);
  return new Date(local - offsetSeconds * 1000);
}

// The UTC form a session in time zone UTC writes, the one the server's connections use.
const UTC_TIMESTAMPTZ = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?\+00$/;

/**
 * A timestamptz in PostgreSQL's text form as `Date.toISOString()` writes it (milliseconds, `Z`),
 * without a Date in between when the text is in UTC: an API reply of a year of points converts
 * thousands per request. Any other form goes through parsePgTimestamptz.
 */
export function pgTimestamptzToIso(text: string): string {
  const m = UTC_TIMESTAMPTZ.exec(text);
  if (!m || m[1]! < '1000') return parsePgTimestamptz(text).toISOString();
  return `${m[1]}T${m[2]}.${(m[3] ?? '').padEnd(3, '0').slice(0, 3)}Z`;
}
