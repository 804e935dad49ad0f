/**
 * The console's one way to show values and times, in the UI language and the chosen time zone:
 * components call these (they read reactive state, so the text follows a change of either).
 */
import { i18n } from '../i18n.svelte';
import {
  formatAxisTime,
  formatDateTime,
  formatTime,
  relativeTime as relative,
  timeZoneLabel,
} from './date-format';
import { formatNumber, formatValue, valueFormatOf, type ValueFormat } from './number-format';
import { timeZone } from './time-zone.svelte';

/** Date and time with the zone's label; `fallback` for no time at all. */
export function showDateTime(value: string | number | Date | null | undefined, fallback = '—'): string {
  if (value === null || value === undefined || value === '') return fallback;
  return formatDateTime(value, i18n.language, timeZone.zone);
}

export function showTime(value: string | number | Date | null | undefined, fallback = '—'): string {
  if (value === null || value === undefined || value === '') return fallback;
  return formatTime(value, i18n.language, timeZone.zone);
}

/** A chart's time-axis tick in the chosen zone; `spanMs` is the axis' range. */
export function showAxisTime(value: number, spanMs: number): string {
  return formatAxisTime(value, i18n.language, timeZone.zone, spanMs);
}

/** The chosen zone's short label (`MEZ`, `UTC`), for a chart's time axis. */
export function showZoneLabel(): string {
  return timeZoneLabel(timeZone.zone, i18n.language);
}

export function showRelative(iso: string, now = Date.now()): string {
  return relative(iso, i18n.language, now);
}

export function showNumber(value: number, format: ValueFormat = {}): string {
  return formatNumber(value, i18n.language, format);
}

/** Any value with the given unit and decimals (`4,05 bar`). */
export function showValue(value: unknown, format: ValueFormat = {}): string {
  return formatValue(value, i18n.language, i18n.t.terms.values, format);
}

type StateLike = Parameters<typeof valueFormatOf>[0] & { value: unknown };

/** A data state's value with its unit and decimals. */
export function showStateValue(state: StateLike): string {
  return showValue(state.value, valueFormatOf(state));
}

/** A data state's value with its decimals, for places that show the unit beside it. */
export function showStateNumber(state: StateLike): string {
  return showValue(state.value, { ...valueFormatOf(state), unit: null });
}

/** A stored term in the UI language, or as stored when the console does not know it. */
const term = (names: Record<string, string>, value: string) =>
  Object.hasOwn(names, value) ? names[value]! : value;
export const healthName = (state: string) => term(i18n.t.terms.health, state);
export const packetStatusName = (status: string) => term(i18n.t.terms.packetStatus, status);
export const valueTypeName = (type: string) => term(i18n.t.terms.valueTypes, type);
export const alarmCategoryName = (category: string) => term(i18n.t.terms.alarmCategories, category);
/** A connector kind by its name ("MQTT broker"), not the stored type (`mqtt-broker`). */
export const connectorKindName = (type: string) => term(i18n.t.devices.connectors.typeNames, type);
