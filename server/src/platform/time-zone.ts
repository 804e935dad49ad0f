/**
 * One cached `Intl.DateTimeFormat` per IANA zone, giving the wall-clock parts of an instant
 * (24-hour clock, with the era so years before 1 CE read correctly). Shared by the calendar periods
 * of the state engine and the time buckets of the query language. Throws RangeError for a zone
 * Intl does not know.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

export function zoneFormatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      era: 'short',
    });
    formatters.set(zone, f);
  }
  return f;
}
