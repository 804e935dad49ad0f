import { isUuid } from '../platform/crypto/ids.js';
import { errors } from '../platform/errors.js';

/**
 * The console's widget grid (`layout = { version: 1, widgets: [...] }`, docs/console.md). Only layouts
 * that say `version: 1` are checked; any other JSON object is stored as sent, as before the console
 * existed, so older clients keep working.
 */
export const GRID_COLUMNS = 12;
export const MAX_WIDGETS = 100;
const MAX_ROW = 1000;
const MAX_HEIGHT = 24;
const MAX_STATES = 20;
const MAX_LAYOUT_BYTES = 256 * 1024;

export const WIDGET_TYPES = [
  'line-chart',
  'gauge',
  'donut',
  'boolean',
  'raw-values',
  'twin-button',
  'map',
  'dashboard',
] as const;
// The console's chart ranges (renderer/src/lib/charts/chart-range.ts).
const RANGES = ['5m', '15m', '1h', '6h', '24h', '7d', '30d', '90d', '1y'];

const fail = (path: string, message: string) =>
  errors.validation(`layout${path.replaceAll('/', '.')}: ${message}`, [
    { location: 'body', path: `/layout${path}` },
  ]);

const isInt = (value: unknown, min: number, max: number): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;

/**
 * Checks a version-1 layout and returns the ids of the dashboards its widgets nest (the caller checks
 * they belong to the same account). Throws 400 VALIDATION_ERROR naming the first bad field.
 */
export function checkLayout(layout: Record<string, unknown>): { widget: number; dashboardId: string }[] {
  if (layout.version !== 1) return [];
  if (JSON.stringify(layout).length > MAX_LAYOUT_BYTES)
    throw fail('', `must be at most ${MAX_LAYOUT_BYTES} bytes of JSON`);
  const widgets = layout.widgets;
  if (!Array.isArray(widgets)) throw fail('/widgets', 'must be an array');
  if (widgets.length > MAX_WIDGETS) throw fail('/widgets', `must have at most ${MAX_WIDGETS} widgets`);
  const ids = new Set<string>();
  const nested: { widget: number; dashboardId: string }[] = [];
  widgets.forEach((item: unknown, index) => {
    const at = `/widgets/${index}`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw fail(at, 'must be an object');
    const widget = item as Record<string, unknown>;
    if (typeof widget.id !== 'string' || widget.id.length < 1 || widget.id.length > 100)
      throw fail(`${at}/id`, 'must be a text of 1 to 100 characters');
    if (ids.has(widget.id)) throw fail(`${at}/id`, `duplicate widget id ${widget.id}`);
    ids.add(widget.id);
    if (!WIDGET_TYPES.includes(widget.type as (typeof WIDGET_TYPES)[number]))
      throw fail(`${at}/type`, `must be one of ${WIDGET_TYPES.join(', ')}`);
    if (!isInt(widget.x, 0, GRID_COLUMNS - 1))
      throw fail(`${at}/x`, `must be an integer from 0 to ${GRID_COLUMNS - 1}`);
    if (!isInt(widget.w, 1, GRID_COLUMNS - widget.x))
      throw fail(
        `${at}/w`,
        `must be an integer from 1 to ${GRID_COLUMNS - widget.x} (the grid has ${GRID_COLUMNS} columns)`,
      );
    if (!isInt(widget.y, 0, MAX_ROW)) throw fail(`${at}/y`, `must be an integer from 0 to ${MAX_ROW}`);
    if (!isInt(widget.h, 1, MAX_HEIGHT)) throw fail(`${at}/h`, `must be an integer from 1 to ${MAX_HEIGHT}`);
    if (widget.title !== undefined && (typeof widget.title !== 'string' || widget.title.length > 200))
      throw fail(`${at}/title`, 'must be a text of at most 200 characters');
    for (const key of ['twinId', 'dashboardId'] as const) {
      const value = widget[key];
      if (value !== undefined && (typeof value !== 'string' || !isUuid(value)))
        throw fail(`${at}/${key}`, 'must be a UUID');
    }
    if (widget.stateIds !== undefined) {
      const stateIds = widget.stateIds;
      if (!Array.isArray(stateIds) || stateIds.length > MAX_STATES)
        throw fail(`${at}/stateIds`, `must be an array of at most ${MAX_STATES} state ids`);
      stateIds.forEach((stateId: unknown, position) => {
        if (typeof stateId !== 'string' || !isUuid(stateId))
          throw fail(`${at}/stateIds/${position}`, 'must be a UUID');
      });
    }
    for (const key of ['min', 'max'] as const) {
      const value = widget[key];
      if (value !== undefined && value !== null && (typeof value !== 'number' || !Number.isFinite(value)))
        throw fail(`${at}/${key}`, 'must be a number or null');
    }
    if (typeof widget.min === 'number' && typeof widget.max === 'number' && widget.min >= widget.max)
      throw fail(`${at}/min`, 'must be less than max');
    if (widget.range !== undefined && !RANGES.includes(widget.range as string))
      throw fail(`${at}/range`, `must be one of ${RANGES.join(', ')}`);
    if (widget.tag !== undefined && (typeof widget.tag !== 'string' || widget.tag.length > 100))
      throw fail(`${at}/tag`, 'must be a text of at most 100 characters');
    if (typeof widget.dashboardId === 'string')
      nested.push({ widget: index, dashboardId: widget.dashboardId });
  });
  return nested;
}
