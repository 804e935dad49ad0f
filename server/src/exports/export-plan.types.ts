import type { CsvDelimiter } from '../platform/csv/csv-writer.js';

/**
 * What an export plan says (docs/exports.md): which twins and states, which time range, which
 * shape and which CSV format. The engine takes only this, so the preview, plan runs and the
 * console's "Download CSV" share one code path.
 */

/** What a plan exports: twins with their data states, or devices with their own states. */
export const EXPORT_SUBJECTS = ['twins', 'devices'] as const;
export type ExportSubject = (typeof EXPORT_SUBJECTS)[number];

export const CONDITION_FIELDS = [
  'tag',
  'title',
  'property',
  'hierarchy',
  'permissionScope',
  'type',
  'twin',
  'device',
] as const;

/** The condition fields each subject has (`type`: a device's driver; twins have no type). */
export const SUBJECT_FIELDS: Record<ExportSubject, readonly ExportCondition['field'][]> = {
  twins: ['tag', 'title', 'property', 'hierarchy', 'permissionScope', 'twin'],
  devices: ['tag', 'title', 'property', 'hierarchy', 'permissionScope', 'type', 'device'],
};

/** A condition on a twin or device; `not` negates it. Title and hierarchy match parts, ignoring case. */
export interface ExportCondition {
  field: (typeof CONDITION_FIELDS)[number];
  /** The custom property's name (field `property`; a device's keyValueData key). */
  key?: string;
  /**
   * Tag, text part, property value, permission scope id, device driver id (`type`), or the id of
   * a twin or device whose subtree is meant (`twin`, `device`).
   */
  value: string;
  not?: boolean;
}

export interface ExportSelection {
  /** Absent in plans saved before devices could be exported: twins. */
  subject?: ExportSubject;
  operator: 'and' | 'or';
  conditions: ExportCondition[];
  /** State keys to export, in this column order; empty: every state of the selected twins or devices. */
  states: string[];
}

export const RELATIVE_RANGES = [
  'lastDay',
  'lastWeek',
  'lastMonth',
  'previousDay',
  'previousWeek',
  'previousMonth',
] as const;
export type RelativeRange = (typeof RELATIVE_RANGES)[number];

/**
 * A time range in the plan's time zone. Relative ones are resolved when the job starts; absolute
 * ones are local wall-clock times (`2026-10-01T00:00`), `to` exclusive.
 */
export type ExportRange = { relative: RelativeRange } | { from: string; to: string };

export const AVERAGES = ['hour', 'day', 'week'] as const;
export type ExportAverage = (typeof AVERAGES)[number];

export interface ExportShape {
  /** `points`: one row per data point; `clusterPerPacket`: one row per twin and time, a column per state. */
  layout: 'points' | 'clusterPerPacket';
  /** Mean per hour, day or week of the time zone instead of the raw points. */
  average: ExportAverage | null;
  address: boolean;
  geolocation: boolean;
  /** Custom properties written as columns, in this order. */
  customProperties: string[];
}

export interface ExportFormat {
  delimiter: CsvDelimiter;
  decimalSeparator: '.' | ',';
  bom: boolean;
  /** Own header names by column id (`time`, `twin`, `state`, `value`, `state:<key>`, `property:<name>` …). */
  headerNames: Record<string, string>;
  escapeFormulas: boolean;
  gzip: boolean;
  /**
   * `iso8601` (default): `2026-10-25T02:30:00+01:00`, unambiguous in a DST change; `spreadsheet`:
   * `2026-10-25 02:30:00`, the plan's wall-clock time that Excel and LibreOffice read as a date.
   */
  timeFormat?: ExportTimeFormat;
}

export const EXPORT_TIME_FORMATS = ['iso8601', 'spreadsheet'] as const;
export type ExportTimeFormat = (typeof EXPORT_TIME_FORMATS)[number];

/**
 * German Excel opens this by double-click: semicolons, decimal commas, a BOM for UTF-8, times it
 * reads as dates.
 */
export const EXCEL_DE: Pick<ExportFormat, 'delimiter' | 'decimalSeparator' | 'bom' | 'timeFormat'> = {
  delimiter: ';',
  decimalSeparator: ',',
  bom: true,
  timeFormat: 'spreadsheet',
};

export const DEFAULT_FORMAT: ExportFormat = {
  delimiter: ',',
  decimalSeparator: '.',
  bom: false,
  headerNames: {},
  escapeFormulas: true,
  gzip: false,
};

export const DEFAULT_SHAPE: ExportShape = {
  layout: 'points',
  average: null,
  address: false,
  geolocation: false,
  customProperties: [],
};

export interface ExportDefinition {
  selection: ExportSelection;
  range: ExportRange;
  timeZone: string;
  shape: ExportShape;
  format: ExportFormat;
}

export const subjectOf = (def: Pick<ExportDefinition, 'selection'>): ExportSubject =>
  def.selection.subject ?? 'twins';
