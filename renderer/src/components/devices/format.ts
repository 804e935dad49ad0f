import type { Language } from '../../lib/i18n.svelte';

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

/** "3 minutes ago" in the console's language; `now` is passed so a ticking clock re-renders it. */
export function relativeTime(iso: string, language: Language, now = Date.now()): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  const format = new Intl.RelativeTimeFormat(language, { numeric: 'auto' });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === 'second')
      return format.format(Math.round(seconds / size), unit);
  }
  return format.format(0, 'second');
}

export function dateTime(iso: string, language: Language): string {
  return new Date(iso).toLocaleString(language === 'de' ? 'de-DE' : 'en-GB', {
    dateStyle: 'medium',
    timeStyle: 'medium',
  });
}

/** Badge style for a device health state (free text from the driver's rules). */
export function healthBadge(state: string): string {
  const value = state.toLowerCase();
  if (/^(ok|healthy|good|online|normal)/.test(value)) return 'badge-success';
  if (/warn|degraded/.test(value)) return 'badge-warning';
  if (/unhealthy|crit|error|fail|alarm|offline|silent|dead/.test(value)) return 'badge-danger';
  return '';
}

/** A state value for display: text as it is, everything else as (pretty) JSON. */
export function showValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value, null, typeof value === 'object' && value !== null ? 2 : undefined);
}

/** `aria-sort` for a column header, from the API's `sort` value. */
export function ariaSort(sort: string, field: string): 'ascending' | 'descending' | undefined {
  if (sort === field) return 'ascending';
  if (sort === `-${field}`) return 'descending';
  return undefined;
}

/** One current state of a device, as read or as pushed live. */
export interface CurrentState {
  key: string;
  value: unknown;
  timestamp: string;
  /** A counter set when the value arrived over the live socket, so the row flashes. */
  live?: number;
}
