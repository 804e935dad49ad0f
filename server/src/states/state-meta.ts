import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { VISUAL_TYPES, type StateMeta, type VisualType } from './data-state.entity.js';

/** Spellings the console and older clients use, folded (lower case, letters and digits only). */
const ALIASES: Record<string, VisualType> = {
  ...Object.fromEntries(VISUAL_TYPES.map((type) => [fold(type), type])),
  bool: 'boolean',
  line: 'line-chart',
  chart: 'line-chart',
  doughnut: 'donut',
  raw: 'raw-values',
  rawvalue: 'raw-values',
  button: 'twin-button',
  twinbuttontile: 'twin-button',
  map: 'map-values',
  mapvalue: 'map-values',
};

function fold(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** `lineChart`, `line_chart`, `Line Chart` → `line-chart`; undefined when it is no visual type. */
export function canonicalVisualType(text: string): VisualType | undefined {
  return ALIASES[fold(text)];
}

/** `meta` as a request sends it: the visual type is any spelling, parts may be null. */
export interface MetaInput {
  visual?: {
    type?: string | null;
    yAxis?: { min?: number | null; max?: number | null; unit?: string | null; [key: string]: unknown } | null;
    [key: string]: unknown;
  } | null;
  [key: string]: unknown;
}

/**
 * `meta` as stored: `meta.visual.type` canonical (an empty or null type means none, a null
 * visual none at all), the line chart's y-axis bounds in order (0 is a bound like any other).
 * Everything else is the console's and kept as sent. Throws VALIDATION_ERROR naming the path.
 */
export function normaliseMeta(meta: MetaInput): StateMeta {
  const { visual, ...rest } = meta;
  if (visual === undefined || visual === null) return rest;
  const { type, yAxis, ...others } = visual;
  const next: NonNullable<StateMeta['visual']> = { ...others };
  if (type !== null && type !== '' && type !== undefined) {
    const canonical = canonicalVisualType(type);
    if (!canonical) {
      throw errors.validation(`meta.visual.type must be one of ${VISUAL_TYPES.join(', ')}`, [
        {
          location: 'body',
          ...problem('/meta/visual/type', 'enum', { allowedValues: VISUAL_TYPES }),
          allowed: VISUAL_TYPES,
        },
      ]);
    }
    next.type = canonical;
  }
  if (yAxis !== undefined && yAxis !== null) {
    if (typeof yAxis.min === 'number' && typeof yAxis.max === 'number' && yAxis.min > yAxis.max) {
      throw errors.validation('meta.visual.yAxis.min must not be greater than max', [
        { location: 'body', ...problem('/meta/visual/yAxis/min', 'maximum', { limit: yAxis.max }) },
      ]);
    }
    next.yAxis = yAxis;
  }
  return { ...rest, visual: next };
}
