import type { CsvValue } from '../platform/csv/csv-writer.js';
import type { SelectedDevice } from '../devices/device-selection.queries.js';
import { zoneOffsetMs } from '../timeseries/query/query.time.js';
import type { SelectedTwin } from '../twins/twin-selection.queries.js';
import { subjectOf, type ExportDefinition, type ExportFormat } from './export-plan.types.js';

/**
 * The columns of an export, in order: `time`, `twin`, `hierarchy` (devices: `time`, `device` — its
 * device_id —, `title`), then the chosen meta columns
 * (`address.street` … `address.country`, `latitude`, `longitude`, `property:<name>`), then either
 * `state`, `unit`, `value` (one row per point) or `state:<key>` per state (clusterPerPacket). Each
 * column has an id; the header shows the plan's own name for it, else a default.
 */
export interface ExportColumn {
  id: string;
  header: string;
}

export const ADDRESS_FIELDS = ['street', 'postalCode', 'city', 'region', 'country'] as const;

const DEFAULT_HEADERS: Record<string, string> = {
  time: 'time',
  twin: 'twin',
  hierarchy: 'hierarchy',
  device: 'device',
  title: 'title',
  state: 'state',
  unit: 'unit',
  value: 'value',
  latitude: 'latitude',
  longitude: 'longitude',
};

/** The state keys of a clusterPerPacket export: the plan's order, else sorted. */
export function clusterKeys(def: ExportDefinition, states: Array<{ key: string }>): string[] {
  if (def.selection.states.length > 0) return def.selection.states;
  return [...new Set(states.map((s) => s.key))].sort();
}

export function exportColumns(def: ExportDefinition, states: Array<{ key: string }>): ExportColumn[] {
  const ids = subjectOf(def) === 'devices' ? ['time', 'device', 'title'] : ['time', 'twin', 'hierarchy'];
  if (def.shape.address) ids.push(...ADDRESS_FIELDS.map((f) => `address.${f}`));
  if (def.shape.geolocation) ids.push('latitude', 'longitude');
  ids.push(...def.shape.customProperties.map((p) => `property:${p}`));
  if (def.shape.layout === 'points') ids.push('state', 'unit', 'value');
  else ids.push(...clusterKeys(def, states).map((k) => `state:${k}`));
  return ids.map((id) => ({ id, header: def.format.headerNames[id] ?? defaultHeader(id) }));
}

function defaultHeader(id: string): string {
  if (id.startsWith('state:')) return id.slice('state:'.length);
  if (id.startsWith('property:')) return id.slice('property:'.length);
  return DEFAULT_HEADERS[id] ?? id;
}

/** The cells of a device that precede the values: device_id, title and the chosen meta columns (no address). */
export function deviceCells(def: ExportDefinition, device: SelectedDevice): CsvValue[] {
  const cells: CsvValue[] = [device.deviceId, device.title];
  if (def.shape.geolocation) cells.push(device.latitude, device.longitude);
  for (const name of def.shape.customProperties) cells.push(device.customProperties[name] ?? null);
  return cells;
}

/** The cells of a twin that precede the values: twin, hierarchy and the chosen meta columns. */
export function twinCells(def: ExportDefinition, twin: SelectedTwin): CsvValue[] {
  const cells: CsvValue[] = [twin.title, twin.hierarchy];
  if (def.shape.address) {
    for (const field of ADDRESS_FIELDS) {
      const value = twin.address?.[field];
      cells.push(typeof value === 'string' || typeof value === 'number' ? String(value) : null);
    }
  }
  if (def.shape.geolocation) cells.push(twin.latitude, twin.longitude);
  for (const name of def.shape.customProperties) cells.push(twin.customProperties[name] ?? null);
  return cells;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * An instant as ISO-8601 wall-clock time in `zone` with its offset (`2026-10-25T02:30:00+01:00`),
 * so the repeated hour of an autumn DST change stays unambiguous; milliseconds only when not zero.
 */
export function localTime(ms: number, zone: string): string {
  const offset = zone === 'UTC' ? 0 : zoneOffsetMs(zone, ms);
  const d = new Date(ms + offset);
  const minutes = Math.round(Math.abs(offset) / 60_000);
  const zoneText = `${offset < 0 ? '-' : '+'}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
  const millis = d.getUTCMilliseconds();
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` +
    `T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}` +
    `${millis ? `.${pad(millis, 3)}` : ''}${zoneText}`
  );
}

/**
 * An instant as the wall-clock time in `zone` that spreadsheets read as a date
 * (`2026-10-25 02:30:00`); milliseconds only when not zero, after the file's decimal separator.
 */
export function spreadsheetTime(ms: number, zone: string, decimalSeparator: '.' | ','): string {
  const d = new Date(ms + (zone === 'UTC' ? 0 : zoneOffsetMs(zone, ms)));
  const millis = d.getUTCMilliseconds();
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` +
    ` ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}` +
    (millis ? `${decimalSeparator}${pad(millis, 3)}` : '')
  );
}

/** The time cell writer `format` asks for. */
export function timeCell(
  format: Pick<ExportFormat, 'timeFormat' | 'decimalSeparator'>,
): (ms: number, zone: string) => string {
  return format.timeFormat === 'spreadsheet'
    ? (ms, zone) => spreadsheetTime(ms, zone, format.decimalSeparator)
    : localTime;
}
