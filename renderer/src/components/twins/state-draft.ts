import type { Body } from '../../api/generated';
import type { TwinState } from '../../lib/twins/twin-api';

export const VALUE_TYPES = ['number', 'integer', 'boolean', 'string', 'object'] as const;
export const SOURCE_TYPES = [
  'connector',
  'dynamic-routing',
  'aggregate',
  'time-aggregated',
  'timeseries-aggregate',
  'random',
  'boolean',
  'hub',
] as const;
export const VISUAL_TYPES = [
  'line-chart',
  'gauge',
  'donut',
  'boolean',
  'raw-values',
  'twin-button',
  'map-values',
];
export const AGGREGATE_OPERATIONS = ['sum', 'mean', 'min', 'max', 'count', 'difference'];
export const WINDOW_OPERATIONS = ['sum', 'mean', 'min', 'max', 'count'];
export const PERIODS = [
  'minute',
  'hour',
  'day',
  'week',
  'month',
  'year',
  'previous-day',
  'previous-week',
  'previous-month',
  'previous-year',
];

export type StateBody = Body<'POST /xapi/v1/digital-twins/{id}/states'>;

/**
 * The editor's fields as text: one set of source fields for every type, so switching the type
 * back and forth keeps what was typed; only the chosen type's fields are sent.
 */
export interface StateDraft {
  key: string;
  title: string;
  valueType: string;
  unit: string;
  sourceType: string;
  source: Record<string, string>;
  stateIds: string[];
  otherStateIds: string;
  initial: boolean;
  visualType: string;
  yMin: string;
  yMax: string;
  yUnit: string;
}

const text = (value: unknown) =>
  value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);

export function stateDraftOf(state: TwinState | null, siblingIds: Set<string>): StateDraft {
  const source = (state?.source ?? {}) as Record<string, unknown>;
  const visual = ((state?.meta ?? {}) as { visual?: Record<string, unknown> | null }).visual ?? {};
  const yAxis = (visual.yAxis ?? {}) as Record<string, unknown>;
  const ids = Array.isArray(source.stateIds) ? (source.stateIds as string[]) : [];
  return {
    key: state?.key ?? '',
    title: state?.title ?? '',
    valueType: state?.valueType ?? 'number',
    unit: state?.unit ?? '',
    sourceType: typeof source.type === 'string' ? source.type : '',
    source: Object.fromEntries(
      Object.entries(source)
        .filter(([name]) => !['type', 'stateIds', 'initial'].includes(name))
        .map(([name, value]) => [name, text(value)]),
    ),
    stateIds: ids.filter((id) => siblingIds.has(id)),
    otherStateIds: ids.filter((id) => !siblingIds.has(id)).join(', '),
    initial: source.initial === true,
    visualType: typeof visual.type === 'string' ? visual.type : '',
    yMin: text(yAxis.min),
    yMax: text(yAxis.max),
    yUnit: text(yAxis.unit),
  };
}

/** A number when the text is one; other text is sent as it is, so the server names the field. */
function numberOrText(value: string | undefined): unknown {
  const trimmed = (value ?? '').trim();
  if (trimmed === '') return undefined;
  const number = Number(trimmed.replace(',', '.'));
  return Number.isFinite(number) ? number : trimmed;
}

const SOURCE_FIELDS: Record<string, { texts?: string[]; numbers?: string[] }> = {
  connector: { texts: ['connectorId', 'deviceId', 'stateKey'] },
  'dynamic-routing': { texts: ['stateKey'] },
  aggregate: { texts: ['operation'] },
  'time-aggregated': { texts: ['stateId', 'operation', 'period'] },
  'timeseries-aggregate': { texts: ['stateId', 'operation'], numbers: ['windowSeconds', 'intervalSeconds'] },
  random: { numbers: ['min', 'max', 'intervalSeconds', 'decimals'] },
  boolean: {},
  hub: { texts: ['deviceId', 'stateKey'] },
};

export function sourceOf(draft: StateDraft): StateBody['source'] {
  if (!draft.sourceType) return null;
  const fields = SOURCE_FIELDS[draft.sourceType] ?? {};
  const source: Record<string, unknown> = { type: draft.sourceType };
  for (const name of fields.texts ?? [])
    if (draft.source[name]?.trim()) source[name] = draft.source[name].trim();
  for (const name of fields.numbers ?? []) {
    const value = numberOrText(draft.source[name]);
    if (value !== undefined) source[name] = value;
  }
  if (draft.sourceType === 'aggregate') {
    const others = draft.otherStateIds
      .split(/[\s,]+/)
      .map((id) => id.trim())
      .filter(Boolean);
    source.stateIds = [...new Set([...draft.stateIds, ...others])];
  }
  if (draft.sourceType === 'boolean') source.initial = draft.initial;
  return source as StateBody['source'];
}

export function stateBodyOf(draft: StateDraft, meta: Record<string, unknown>): StateBody {
  const visual: Record<string, unknown> = { ...((meta.visual as Record<string, unknown> | null) ?? {}) };
  visual.type = draft.visualType || null;
  if (draft.visualType === 'line-chart') {
    visual.yAxis = {
      min: numberOrText(draft.yMin) ?? null,
      max: numberOrText(draft.yMax) ?? null,
      unit: draft.yUnit.trim() || null,
    };
  } else delete visual.yAxis;
  return {
    key: draft.key.trim(),
    title: draft.title.trim(),
    valueType: draft.valueType as StateBody['valueType'],
    unit: draft.unit.trim() || null,
    source: sourceOf(draft),
    meta: { ...meta, visual },
  };
}

/** Error detail paths (`/source/min`) as the editor's field ids. */
export function fieldOfPath(path: string): string {
  const parts = path.split('/').filter(Boolean);
  if (parts[0] === 'source') return `state-source-${parts[1] ?? 'type'}`;
  if (parts[0] === 'meta')
    return parts.at(-1) === 'min' ? 'state-y-min' : parts.at(-1) === 'max' ? 'state-y-max' : 'state-visual';
  return `state-${parts[0] ?? 'key'}`;
}
