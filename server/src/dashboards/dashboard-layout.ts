import { isUuid } from '../platform/crypto/ids.js';
import { errors } from '../platform/errors.js';
import { integerProblem, problem, type CheckProblem } from '../platform/http/problem-detail.js';
import { CHART_RANGES, GRID_COLUMNS, MAX_WIDGETS, WIDGET_TYPES } from './widget-grid.js';

/**
 * The console's widget grid (`layout = { version: 1, widgets: [...] }`, docs/console.md). Only layouts
 * that say `version: 1` are checked; any other JSON object is stored as sent, as before the console
 * existed, so older clients keep working.
 */
const MAX_ROW = 1000;
const MAX_HEIGHT = 24;
const MAX_STATES = 20;
const MAX_LAYOUT_BYTES = 256 * 1024;

const fail = ({ path, ...detail }: CheckProblem) =>
  errors.validation(`layout${path.replaceAll('/', '.')}: ${detail.message}`, [
    { location: 'body', path: `/layout${path}`, ...detail },
  ]);

/** Text of `min` to `max` characters, else the detail saying why not. */
function textProblem(path: string, value: unknown, min: number, max: number, message: string) {
  if (typeof value !== 'string') return problem(path, 'type', { type: 'string' }, message);
  if (value.length < min) return problem(path, 'minLength', { limit: min }, message);
  if (value.length > max) return problem(path, 'maxLength', { limit: max }, message);
  return undefined;
}

const uuidProblem = (path: string, value: unknown) =>
  typeof value !== 'string'
    ? problem(path, 'type', { type: 'string' }, 'must be a UUID')
    : isUuid(value)
      ? undefined
      : problem(path, 'format', { format: 'uuid' }, 'must be a UUID');

/**
 * Checks a version-1 layout and returns the ids of the dashboards its widgets nest (the caller checks
 * they belong to the same account). Throws 400 VALIDATION_ERROR naming the first bad field.
 */
export function checkLayout(layout: Record<string, unknown>): { widget: number; dashboardId: string }[] {
  if (layout.version !== 1) return [];
  // JSON Schema has no keyword for a size in bytes: the message says it.
  if (JSON.stringify(layout).length > MAX_LAYOUT_BYTES)
    throw fail({ path: '', message: `must be at most ${MAX_LAYOUT_BYTES} bytes of JSON` });
  const widgets = layout.widgets;
  if (!Array.isArray(widgets)) throw fail(problem('/widgets', 'type', { type: 'array' }, 'must be an array'));
  if (widgets.length > MAX_WIDGETS)
    throw fail(
      problem('/widgets', 'maxItems', { limit: MAX_WIDGETS }, `must have at most ${MAX_WIDGETS} widgets`),
    );
  const ids = new Set<string>();
  const nested: { widget: number; dashboardId: string }[] = [];
  const check = (found: CheckProblem | undefined) => {
    if (found) throw fail(found);
  };
  widgets.forEach((item: unknown, index) => {
    const at = `/widgets/${index}`;
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw fail(problem(at, 'type', { type: 'object' }, 'must be an object'));
    const widget = item as Record<string, unknown>;
    check(textProblem(`${at}/id`, widget.id, 1, 100, 'must be a text of 1 to 100 characters'));
    const id = widget.id as string;
    if (ids.has(id)) throw fail(problem(`${at}/id`, 'unique', { value: id }, `duplicate widget id ${id}`));
    ids.add(id);
    if (!WIDGET_TYPES.includes(widget.type as (typeof WIDGET_TYPES)[number]))
      throw fail(
        problem(
          `${at}/type`,
          'enum',
          { allowedValues: WIDGET_TYPES },
          `must be one of ${WIDGET_TYPES.join(', ')}`,
        ),
      );
    const lastColumn = GRID_COLUMNS - 1;
    check(integerProblem(`${at}/x`, widget.x, 0, lastColumn, `must be an integer from 0 to ${lastColumn}`));
    const x = widget.x as number;
    const width = `must be an integer from 1 to ${GRID_COLUMNS - x} (the grid has ${GRID_COLUMNS} columns)`;
    check(integerProblem(`${at}/w`, widget.w, 1, GRID_COLUMNS - x, width));
    check(integerProblem(`${at}/y`, widget.y, 0, MAX_ROW, `must be an integer from 0 to ${MAX_ROW}`));
    check(integerProblem(`${at}/h`, widget.h, 1, MAX_HEIGHT, `must be an integer from 1 to ${MAX_HEIGHT}`));
    if (widget.title !== undefined)
      check(textProblem(`${at}/title`, widget.title, 0, 200, 'must be a text of at most 200 characters'));
    for (const key of ['twinId', 'dashboardId'] as const)
      if (widget[key] !== undefined) check(uuidProblem(`${at}/${key}`, widget[key]));
    if (widget.stateIds !== undefined) {
      const stateIds = widget.stateIds;
      const message = `must be an array of at most ${MAX_STATES} state ids`;
      if (!Array.isArray(stateIds)) throw fail(problem(`${at}/stateIds`, 'type', { type: 'array' }, message));
      if (stateIds.length > MAX_STATES)
        throw fail(problem(`${at}/stateIds`, 'maxItems', { limit: MAX_STATES }, message));
      stateIds.forEach((stateId: unknown, position) =>
        check(uuidProblem(`${at}/stateIds/${position}`, stateId)),
      );
    }
    for (const key of ['min', 'max'] as const) {
      const value = widget[key];
      if (value !== undefined && value !== null && (typeof value !== 'number' || !Number.isFinite(value)))
        throw fail(problem(`${at}/${key}`, 'type', { type: ['number', 'null'] }, 'must be a number or null'));
    }
    if (typeof widget.min === 'number' && typeof widget.max === 'number' && widget.min >= widget.max)
      throw fail(problem(`${at}/min`, 'exclusiveMaximum', { limit: widget.max }, 'must be less than max'));
    if (widget.range !== undefined && !(CHART_RANGES as readonly unknown[]).includes(widget.range))
      throw fail(
        problem(
          `${at}/range`,
          'enum',
          { allowedValues: CHART_RANGES },
          `must be one of ${CHART_RANGES.join(', ')}`,
        ),
      );
    if (widget.tag !== undefined)
      check(textProblem(`${at}/tag`, widget.tag, 0, 100, 'must be a text of at most 100 characters'));
    if (typeof widget.dashboardId === 'string')
      nested.push({ widget: index, dashboardId: widget.dashboardId });
  });
  return nested;
}
