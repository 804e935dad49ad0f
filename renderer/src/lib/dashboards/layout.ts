/**
 * A dashboard's widget grid as stored in the dashboard's `layout` (`{ version: 1, widgets: [...] }`),
 * and the pure placement rules of the editor: widgets never overlap; whoever is in the way of a moved
 * or resized widget is pushed down.
 */
import { CHART_RANGES, type ChartRange } from '../charts/chart-range';
import {
  GRID_COLUMNS,
  MAX_WIDGETS,
  WIDGET_TYPES,
  type WidgetType,
} from '../../../../server/src/dashboards/widget-grid';

export { GRID_COLUMNS, MAX_WIDGETS, WIDGET_TYPES, type WidgetType };
export const MAX_ROWS = 200;

export { CHART_RANGES, type ChartRange };

export interface Widget {
  id: string;
  type: WidgetType;
  /** Empty: the widget names itself after its state, twin or dashboard. */
  title: string;
  x: number;
  y: number;
  w: number;
  h: number;
  twinId?: string;
  /** Bound data states (one for value, gauge and boolean; several for charts, raw values and donut). */
  stateIds?: string[];
  /** The nested dashboard's id. */
  dashboardId?: string;
  /** Gauge / donut bounds; null falls back to the state's meta.visual.yAxis, then 0–100. */
  min?: number | null;
  max?: number | null;
  range?: ChartRange;
  /** Map: only twins carrying this tag (empty: every twin with coordinates). */
  tag?: string;
}

export interface DashboardLayout {
  version: 1;
  widgets: Widget[];
}

export interface Size {
  w: number;
  h: number;
}

export const DEFAULT_SIZE: Record<WidgetType, Size> = {
  'line-chart': { w: 6, h: 4 },
  value: { w: 3, h: 3 },
  gauge: { w: 3, h: 4 },
  donut: { w: 3, h: 4 },
  boolean: { w: 3, h: 2 },
  'raw-values': { w: 4, h: 4 },
  'twin-button': { w: 3, h: 2 },
  map: { w: 6, h: 5 },
  dashboard: { w: 3, h: 2 },
};

export const MIN_SIZE: Record<WidgetType, Size> = {
  'line-chart': { w: 3, h: 3 },
  value: { w: 2, h: 2 },
  gauge: { w: 2, h: 3 },
  donut: { w: 2, h: 3 },
  boolean: { w: 2, h: 2 },
  'raw-values': { w: 2, h: 2 },
  'twin-button': { w: 2, h: 2 },
  map: { w: 3, h: 3 },
  dashboard: { w: 2, h: 2 },
};
export const MAX_HEIGHT = 12;

const isType = (value: unknown): value is WidgetType => WIDGET_TYPES.includes(value as WidgetType);
const int = (value: unknown, fallback: number) =>
  typeof value === 'number' && Number.isFinite(value) ? Math.round(value) : fallback;
const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
const bound = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/** Keeps a widget inside the grid and within its type's sizes. */
export function clampWidget(widget: Widget): Widget {
  const min = MIN_SIZE[widget.type];
  const w = Math.min(GRID_COLUMNS, Math.max(min.w, widget.w));
  const h = Math.min(MAX_HEIGHT, Math.max(min.h, widget.h));
  const x = Math.min(GRID_COLUMNS - w, Math.max(0, widget.x));
  const y = Math.min(MAX_ROWS - h, Math.max(0, widget.y));
  return { ...widget, x, y, w, h };
}

/**
 * Reads a stored layout leniently: anything that is not a version-1 widget list is an empty grid,
 * unknown widget types are dropped, positions are clamped and overlaps resolved, so a hand-edited
 * or older layout still opens.
 */
export function parseLayout(raw: unknown): DashboardLayout {
  const list = (raw as { widgets?: unknown } | null)?.widgets;
  if (!Array.isArray(list)) return { version: 1, widgets: [] };
  const seen = new Set<string>();
  const widgets: Widget[] = [];
  for (const item of list.slice(0, MAX_WIDGETS)) {
    if (typeof item !== 'object' || item === null) continue;
    const source = item as Record<string, unknown>;
    if (!isType(source.type)) continue;
    let id = text(source.id) ?? '';
    if (!id || seen.has(id)) id = newWidgetId();
    seen.add(id);
    const size = DEFAULT_SIZE[source.type];
    const widget: Widget = {
      id,
      type: source.type,
      title: text(source.title) ?? '',
      x: int(source.x, 0),
      y: int(source.y, MAX_ROWS),
      w: int(source.w, size.w),
      h: int(source.h, size.h),
    };
    const twinId = text(source.twinId);
    if (twinId) widget.twinId = twinId;
    if (Array.isArray(source.stateIds))
      widget.stateIds = source.stateIds.filter((s) => typeof s === 'string');
    const dashboardId = text(source.dashboardId);
    if (dashboardId) widget.dashboardId = dashboardId;
    if ('min' in source) widget.min = bound(source.min);
    if ('max' in source) widget.max = bound(source.max);
    if (CHART_RANGES.includes(source.range as ChartRange)) widget.range = source.range as ChartRange;
    const tag = text(source.tag);
    if (tag) widget.tag = tag;
    widgets.push(clampWidget(widget));
  }
  return { version: 1, widgets: settle(widgets) };
}

export function newWidgetId(): string {
  return `w-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

export const overlaps = (a: Widget, b: Widget) =>
  a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/** Reading order: top to bottom, then left to right (also the order of the one-column layout). */
export const readingOrder = (widgets: Widget[]) => [...widgets].sort((a, b) => a.y - b.y || a.x - b.x);

/**
 * Places every widget without overlap: `first` keeps its place, the others in reading order move
 * down just below whatever they collide with.
 */
export function settle(widgets: Widget[], first?: string): Widget[] {
  const anchor = widgets.find((widget) => widget.id === first);
  const placed: Widget[] = anchor ? [anchor] : [];
  for (const widget of readingOrder(widgets.filter((other) => other !== anchor))) {
    const next = { ...widget };
    for (;;) {
      const blocker = placed.find((other) => overlaps(other, next));
      if (!blocker) break;
      next.y = blocker.y + blocker.h;
    }
    placed.push(next);
  }
  // Keep the caller's order (it is the focus and tab order of the editor).
  const byId = new Map(placed.map((widget) => [widget.id, widget]));
  return widgets.map((widget) => byId.get(widget.id)!);
}

/** The first free place for a new widget of this size, scanning rows from the top. */
export function freeSpot(widgets: Widget[], size: Size): { x: number; y: number } {
  for (let y = 0; y < MAX_ROWS; y++) {
    for (let x = 0; x + size.w <= GRID_COLUMNS; x++) {
      const probe = { id: '', type: 'gauge', title: '', x, y, ...size } as Widget;
      if (!widgets.some((other) => overlaps(other, probe))) return { x, y };
    }
  }
  return { x: 0, y: bottom(widgets) };
}

/** The first row below every widget. */
export const bottom = (widgets: Widget[]) =>
  widgets.reduce((max, widget) => Math.max(max, widget.y + widget.h), 0);

/** Adds a widget of its type's default size at the first free place. */
export function addWidget(widgets: Widget[], draft: Omit<Widget, 'x' | 'y' | 'w' | 'h' | 'id'>): Widget[] {
  const size = DEFAULT_SIZE[draft.type];
  const widget = clampWidget({ ...draft, id: newWidgetId(), ...size, ...freeSpot(widgets, size) });
  return [...widgets, widget];
}

/** Moves a widget by whole cells; widgets in its way are pushed down. */
export function moveWidget(widgets: Widget[], id: string, dx: number, dy: number): Widget[] {
  return place(widgets, id, (widget) => ({ ...widget, x: widget.x + dx, y: widget.y + dy }));
}

/** Moves a widget to a cell (mouse drag). */
export function moveWidgetTo(widgets: Widget[], id: string, x: number, y: number): Widget[] {
  return place(widgets, id, (widget) => ({ ...widget, x, y }));
}

/** Grows or shrinks a widget by whole cells (its top-left corner stays). */
export function resizeWidget(widgets: Widget[], id: string, dw: number, dh: number): Widget[] {
  return place(widgets, id, (widget) => ({ ...widget, w: widget.w + dw, h: widget.h + dh }));
}

export function removeWidget(widgets: Widget[], id: string): Widget[] {
  return widgets.filter((widget) => widget.id !== id);
}

/** Replaces a widget's settings (not its place); its size stays. */
export function updateWidget(widgets: Widget[], next: Widget): Widget[] {
  return place(widgets, next.id, () => next);
}

function place(widgets: Widget[], id: string, change: (widget: Widget) => Widget): Widget[] {
  const current = widgets.find((widget) => widget.id === id);
  if (!current) return widgets;
  const next = clampWidget(change(current));
  return settle(
    widgets.map((widget) => (widget.id === id ? next : widget)),
    id,
  );
}

/** The layout as saved: only known fields, so the stored JSON stays small and predictable. */
export function toLayout(widgets: Widget[]): DashboardLayout & Record<string, unknown> {
  return { version: 1, widgets: widgets.map((widget) => ({ ...widget })) };
}

/** Every twin the widgets show (the live socket follows these). */
export const twinIdsOf = (widgets: Widget[]) => [
  ...new Set(widgets.map((widget) => widget.twinId).filter((id): id is string => Boolean(id))),
];
