import { formatDateTime } from '../../lib/format/date-format';
import { showNumber } from '../../lib/format/display';
import { timeZone } from '../../lib/format/time-zone.svelte';
import type { Language } from '../../lib/i18n.svelte';

export { relativeTime } from '../../lib/format/date-format';

/** Date and time in the console's one format (lib/format/date-format.ts), in the chosen time zone. */
export function dateTime(iso: string, language: Language): string {
  return formatDateTime(iso, language, timeZone.zone);
}

/** Badge style for a device health state (free text from the driver's rules). */
export function healthBadge(state: string): string {
  const value = state.toLowerCase();
  if (/^(ok|healthy|good|online|normal)/.test(value)) return 'badge-success';
  if (/warn|degraded/.test(value)) return 'badge-warning';
  if (/unhealthy|crit|error|fail|alarm|offline|silent|dead/.test(value)) return 'badge-danger';
  return '';
}

/** A device value for display: text as it is, numbers in the UI language, everything else as (pretty) JSON. */
export function showValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return showNumber(value);
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
