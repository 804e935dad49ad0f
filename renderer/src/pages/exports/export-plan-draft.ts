import type { Body, Reply } from '../../api/generated';

/**
 * The export plan editor's draft: the plan's fields as form controls hold them (lists as text,
 * header names as `id=Header` lines), and the conversions to and from the XAPI's plan body.
 */
export type Plan = Reply<'GET /xapi/v1/export-plans'>['data'][number];
export type PlanBody = Body<'POST /xapi/v1/export-plans'>;
export type Definition = Body<'POST /xapi/v1/export-plans/preview'>;
type Selection = Definition['selection'];
export type ConditionField = Selection['conditions'][number]['field'];
export type Subject = 'twins' | 'devices';

export const RANGES = [
  'lastDay',
  'lastWeek',
  'lastMonth',
  'previousDay',
  'previousWeek',
  'previousMonth',
] as const;
export type RelativeRange = (typeof RANGES)[number];
export const AVERAGES = ['none', 'hour', 'day', 'week'] as const;
export const DELIMITERS = [',', ';', '\t', '|'] as const;

/** The condition fields of each subject, as the server accepts them (docs/exports.md). */
export const SUBJECT_FIELDS: Record<Subject, ConditionField[]> = {
  twins: ['tag', 'title', 'property', 'hierarchy', 'permissionScope', 'twin'],
  devices: ['tag', 'title', 'property', 'hierarchy', 'permissionScope', 'type', 'device'],
};

export interface ConditionDraft {
  field: ConditionField;
  key: string;
  value: string;
  not: boolean;
}

export interface PlanDraft {
  title: string;
  subject: Subject;
  operator: 'and' | 'or';
  conditions: ConditionDraft[];
  states: string;
  rangeMode: 'relative' | 'absolute';
  relative: RelativeRange;
  from: string;
  to: string;
  timeZone: string;
  layout: 'points' | 'clusterPerPacket';
  average: (typeof AVERAGES)[number];
  address: boolean;
  geolocation: boolean;
  customProperties: string;
  delimiter: (typeof DELIMITERS)[number];
  decimalSeparator: '.' | ',';
  bom: boolean;
  timeFormat: 'iso8601' | 'spreadsheet';
  headerNames: string;
  escapeFormulas: boolean;
  gzip: boolean;
  mailConnectorId: string;
  mailTo: string;
  schedule: string;
}

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function emptyDraft(timeZone: string): PlanDraft {
  return {
    title: '',
    subject: 'twins',
    operator: 'and',
    conditions: [],
    states: '',
    rangeMode: 'relative',
    relative: 'lastDay',
    from: '',
    to: '',
    timeZone,
    layout: 'points',
    average: 'none',
    address: false,
    geolocation: false,
    customProperties: '',
    delimiter: ',',
    decimalSeparator: '.',
    bom: false,
    timeFormat: 'iso8601',
    headerNames: '',
    escapeFormulas: true,
    gzip: false,
    mailConnectorId: '',
    mailTo: '',
    schedule: '',
  };
}

export function draftOf(plan: Plan): PlanDraft {
  const range = plan.range;
  return {
    title: plan.title,
    subject: plan.selection.subject ?? 'twins',
    operator: plan.selection.operator,
    conditions: plan.selection.conditions.map((c) => ({
      field: c.field,
      key: c.key ?? '',
      value: c.value,
      not: c.not ?? false,
    })),
    states: plan.selection.states.join(', '),
    rangeMode: 'relative' in range ? 'relative' : 'absolute',
    relative: 'relative' in range ? range.relative : 'previousDay',
    from: 'from' in range ? range.from : '',
    to: 'to' in range ? range.to : '',
    timeZone: plan.timeZone,
    layout: plan.shape.layout,
    average: plan.shape.average ?? 'none',
    address: plan.shape.address,
    geolocation: plan.shape.geolocation,
    customProperties: plan.shape.customProperties.join(', '),
    delimiter: plan.format.delimiter,
    decimalSeparator: plan.format.decimalSeparator,
    bom: plan.format.bom,
    timeFormat: plan.format.timeFormat ?? 'iso8601',
    headerNames: Object.entries(plan.format.headerNames)
      .map(([id, name]) => `${id}=${name}`)
      .join('\n'),
    escapeFormulas: plan.format.escapeFormulas,
    gzip: plan.format.gzip,
    mailConnectorId: plan.mailConnectorId ?? '',
    mailTo: plan.mailTo.join(', '),
    schedule: plan.schedule ?? '',
  };
}

/** `id=Header` lines as the plan's header names; lines without `=` or a name are left out. */
function headerNames(text: string): Record<string, string> {
  const names: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf('=');
    const id = line.slice(0, at).trim();
    const name = line.slice(at + 1).trim();
    if (at > 0 && id && name) names[id] = name;
  }
  return names;
}

export function definitionOf(d: PlanDraft): Definition {
  return {
    selection: {
      subject: d.subject,
      operator: d.operator,
      // A condition belongs to its subject; one left from the other subject is not sent.
      conditions: d.conditions
        .filter((c) => SUBJECT_FIELDS[d.subject].includes(c.field))
        .map((c) => ({
          field: c.field,
          value: c.value.trim(),
          ...(c.field === 'property' ? { key: c.key.trim() } : {}),
          ...(c.not ? { not: true } : {}),
        })),
      states: list(d.states),
    },
    range: d.rangeMode === 'relative' ? { relative: d.relative } : { from: d.from, to: d.to },
    timeZone: d.timeZone.trim(),
    shape: {
      layout: d.layout,
      average: d.average === 'none' ? null : d.average,
      address: d.subject === 'twins' && d.address,
      geolocation: d.geolocation,
      customProperties: list(d.customProperties),
    },
    format: {
      delimiter: d.delimiter,
      decimalSeparator: d.decimalSeparator,
      bom: d.bom,
      timeFormat: d.timeFormat,
      headerNames: headerNames(d.headerNames),
      escapeFormulas: d.escapeFormulas,
      gzip: d.gzip,
    },
  };
}

export function bodyOf(d: PlanDraft): PlanBody {
  return {
    title: d.title.trim(),
    ...definitionOf(d),
    mailConnectorId: d.mailConnectorId || null,
    mailTo: d.mailConnectorId ? list(d.mailTo) : [],
    schedule: d.schedule.trim() || null,
  };
}

/** Whether the preview can ask already: an absolute range needs both ends, a property its name. */
export function previewable(d: PlanDraft): boolean {
  if (d.rangeMode === 'absolute' && !(d.from && d.to)) return false;
  if (!d.timeZone.trim()) return false;
  return d.conditions.every((c) => c.field !== 'property' || c.key.trim());
}

/** The fixed columns a header name can be given for, in the file's order (server: export-columns.ts). */
export const FIXED_COLUMNS = [
  'time',
  'twin',
  'hierarchy',
  'device',
  'title',
  'state',
  'unit',
  'value',
] as const;

/**
 * The spreadsheet preset: semicolons, decimal commas, a BOM, times a spreadsheet reads as dates,
 * and, unless the plan names its own headers, the fixed columns named in the console's language.
 */
export function spreadsheetPreset(
  d: PlanDraft,
  headers: Record<(typeof FIXED_COLUMNS)[number], string>,
): PlanDraft {
  return {
    ...d,
    delimiter: ';',
    decimalSeparator: ',',
    bom: true,
    timeFormat: 'spreadsheet',
    headerNames: d.headerNames.trim()
      ? d.headerNames
      : FIXED_COLUMNS.map((id) => `${id}=${headers[id]}`).join('\n'),
  };
}
