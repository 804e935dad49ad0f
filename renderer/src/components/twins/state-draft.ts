import type { Body } from '../../api/generated';
import type { TwinState } from '../../lib/twins/twin-api';
import type { SourceField } from '../../lib/twins/state-sources';
import { decimalsSetting } from '../../lib/format/number-format';

export const VALUE_TYPES = ['number', 'integer', 'boolean', 'string', 'object'] as const;
export const VISUAL_TYPES = [
  'line-chart',
  'gauge',
  'donut',
  'boolean',
  'raw-values',
  'twin-button',
  'map-values',
];
export type StateBody = Body<'POST /xapi/v1/digital-twins/{id}/states'>;

/**
 * The editor's fields as text: one set of source fields for every type, so switching the type
 * back and forth keeps what was typed; only the chosen type's fields (its `form` in
 * GET /xapi/v1/state-sources) are sent. A `states` field keeps the twin's states ticked in
 * `stateIds` and other ids typed in `otherStateIds`; a `checkbox` field is "true" or "".
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
  visualType: string;
  yMin: string;
  yMax: string;
  yUnit: string;
  /** `meta.decimals`: how many decimals the console shows (lib/format/number-format.ts). */
  decimals: string;
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
        .filter(([name, value]) => name !== 'type' && !Array.isArray(value))
        .map(([name, value]) => [name, value === false ? '' : text(value)]),
    ),
    stateIds: ids.filter((id) => siblingIds.has(id)),
    otherStateIds: ids.filter((id) => !siblingIds.has(id)).join(', '),
    visualType: typeof visual.type === 'string' ? visual.type : '',
    yMin: text(yAxis.min),
    yMax: text(yAxis.max),
    yUnit: text(yAxis.unit),
    decimals: text((state?.meta as Record<string, unknown> | undefined)?.decimals),
  };
}

/** A number when the text is one; other text is sent as it is, so the server names the field. */
function numberOrText(value: string | undefined): unknown {
  const trimmed = (value ?? '').trim();
  if (trimmed === '') return undefined;
  const number = Number(trimmed.replace(',', '.'));
  return Number.isFinite(number) ? number : trimmed;
}

/** The source to send: the fields of the chosen source, by how the console edits them. */
export function sourceOf(draft: StateDraft, fields: SourceField[]): StateBody['source'] {
  if (!draft.sourceType) return null;
  const source: Record<string, unknown> = { type: draft.sourceType };
  for (const field of fields) {
    const value = draft.source[field.key];
    if (field.widget === 'number') {
      const number = numberOrText(value);
      if (number !== undefined) source[field.key] = number;
    } else if (field.widget === 'checkbox') source[field.key] = value === 'true';
    else if (field.widget === 'states') {
      const others = draft.otherStateIds
        .split(/[\s,]+/)
        .map((id) => id.trim())
        .filter(Boolean);
      source[field.key] = [...new Set([...draft.stateIds, ...others])];
    } else if (value?.trim()) source[field.key] = value.trim();
  }
  return source as StateBody['source'];
}

export function stateBodyOf(
  draft: StateDraft,
  meta: Record<string, unknown>,
  fields: SourceField[],
): StateBody {
  const visual: Record<string, unknown> = { ...((meta.visual as Record<string, unknown> | null) ?? {}) };
  visual.type = draft.visualType || null;
  if (draft.visualType === 'line-chart') {
    visual.yAxis = {
      min: numberOrText(draft.yMin) ?? null,
      max: numberOrText(draft.yMax) ?? null,
      unit: draft.yUnit.trim() || null,
    };
  } else delete visual.yAxis;
  const decimals = decimalsSetting(numberOrText(draft.decimals));
  const { decimals: _previous, ...otherMeta } = meta;
  return {
    key: draft.key.trim(),
    title: draft.title.trim(),
    valueType: draft.valueType as StateBody['valueType'],
    unit: draft.unit.trim() || null,
    source: sourceOf(draft, fields),
    meta: { ...otherMeta, ...(decimals === null ? {} : { decimals }), visual },
  };
}

/** The decimals field holds a whole number from 0 to 10, or nothing. */
export function decimalsProblem(draft: StateDraft): boolean {
  return draft.decimals.trim() !== '' && decimalsSetting(numberOrText(draft.decimals)) === null;
}

/** Error detail paths (`/source/min`) as the editor's field ids. */
export function fieldOfPath(path: string): string {
  const parts = path.split('/').filter(Boolean);
  if (parts[0] === 'source') return `state-source-${parts[1] ?? 'type'}`;
  if (parts[0] === 'meta')
    return parts.at(-1) === 'min' ? 'state-y-min' : parts.at(-1) === 'max' ? 'state-y-max' : 'state-visual';
  return `state-${parts[0] ?? 'key'}`;
}
