import { describe, expect, it } from 'vitest';
import {
  addWidget,
  clampWidget,
  freeSpot,
  GRID_COLUMNS,
  moveWidget,
  moveWidgetTo,
  overlaps,
  parseLayout,
  removeWidget,
  resizeWidget,
  settle,
  toLayout,
  twinIdsOf,
  type Widget,
} from './layout';

const widget = (id: string, x: number, y: number, w = 3, h = 2, type: Widget['type'] = 'gauge'): Widget => ({
  id,
  type,
  title: '',
  x,
  y,
  w,
  h: type === 'gauge' ? Math.max(h, 3) : h,
});

const noOverlaps = (widgets: Widget[]) =>
  widgets.every((a, i) => widgets.every((b, j) => i === j || !overlaps(a, b)));

describe('dashboard layout', () => {
  it('reads a stored layout leniently: drops unknown types, clamps, renames duplicate ids', () => {
    const layout = parseLayout({
      version: 1,
      widgets: [
        { id: 'a', type: 'gauge', x: 11, y: -4, w: 6, h: 4, twinId: 't1', stateIds: ['s1', 7] },
        { id: 'a', type: 'line-chart', x: 0, y: 0, w: 99, h: 1 },
        { id: 'c', type: 'spreadsheet', x: 0, y: 0, w: 2, h: 2 },
        'not a widget',
      ],
    });
    expect(layout.widgets).toHaveLength(2);
    const [gauge, chart] = layout.widgets;
    expect(chart!.id).not.toBe('a');
    // Width capped at the grid, height raised to the line chart's minimum.
    expect(chart).toMatchObject({ x: 0, w: GRID_COLUMNS, h: 3, y: 0 });
    // Clamped into the grid, then placed below the chart, which comes first in reading order.
    expect(gauge).toMatchObject({ id: 'a', x: GRID_COLUMNS - 6, y: 3, w: 6, h: 4, stateIds: ['s1'] });
    expect(noOverlaps(layout.widgets)).toBe(true);
  });

  it('treats anything but a widget list as an empty grid', () => {
    expect(parseLayout({})).toEqual({ version: 1, widgets: [] });
    expect(parseLayout(null)).toEqual({ version: 1, widgets: [] });
    expect(parseLayout({ widgets: 'x' })).toEqual({ version: 1, widgets: [] });
  });

  it('places a new widget at the first free spot of its default size', () => {
    let widgets = addWidget([], { type: 'gauge', title: '' });
    expect(widgets[0]).toMatchObject({ x: 0, y: 0, w: 3, h: 4 });
    widgets = addWidget(widgets, { type: 'line-chart', title: '' });
    expect(widgets[1]).toMatchObject({ x: 3, y: 0, w: 6, h: 4 });
    widgets = addWidget(widgets, { type: 'gauge', title: '' });
    expect(widgets[2]).toMatchObject({ x: 9, y: 0 });
    widgets = addWidget(widgets, { type: 'map', title: '' });
    expect(widgets[3]).toMatchObject({ x: 0, y: 4, w: 6, h: 5 });
    expect(freeSpot(widgets, { w: 6, h: 2 })).toEqual({ x: 6, y: 4 });
    expect(noOverlaps(widgets)).toBe(true);
  });

  it('pushes widgets in the way down when one moves onto them', () => {
    const start = [widget('a', 0, 0), widget('b', 3, 0), widget('c', 3, 3)];
    const moved = moveWidget(start, 'a', 3, 0);
    expect(moved.find((w) => w.id === 'a')).toMatchObject({ x: 3, y: 0 });
    expect(moved.find((w) => w.id === 'b')).toMatchObject({ x: 3, y: 3 });
    // c was below b and is pushed further by the chain.
    expect(moved.find((w) => w.id === 'c')).toMatchObject({ x: 3, y: 6 });
    expect(noOverlaps(moved)).toBe(true);
    // The order of the list (focus order) does not change.
    expect(moved.map((w) => w.id)).toEqual(['a', 'b', 'c']);
  });

  it('keeps moves inside the grid', () => {
    const start = [widget('a', 0, 0)];
    expect(moveWidget(start, 'a', -1, -1)[0]).toMatchObject({ x: 0, y: 0 });
    expect(moveWidget(start, 'a', 20, 0)[0]).toMatchObject({ x: GRID_COLUMNS - 3 });
    expect(moveWidgetTo(start, 'a', 4, 7)[0]).toMatchObject({ x: 4, y: 7 });
  });

  it('resizes within the type limits and pushes neighbours below', () => {
    const start = [widget('a', 0, 0, 3, 3), widget('b', 0, 3, 3, 3)];
    const taller = resizeWidget(start, 'a', 0, 2);
    expect(taller[0]).toMatchObject({ h: 5 });
    expect(taller[1]).toMatchObject({ y: 5 });
    const wider = resizeWidget(start, 'a', 20, 0);
    expect(wider[0]).toMatchObject({ w: GRID_COLUMNS });
    const smaller = resizeWidget(start, 'a', -5, -5);
    // A gauge is at least 2 × 3.
    expect(smaller[0]).toMatchObject({ w: 2, h: 3 });
    expect(clampWidget({ ...widget('x', 11, 0), w: 4 })).toMatchObject({ x: 8, w: 4 });
  });

  it('settles overlapping widgets in reading order, the anchor keeping its place', () => {
    const settled = settle([widget('a', 0, 0), widget('b', 1, 1), widget('c', 2, 2)], 'c');
    expect(settled.find((w) => w.id === 'c')).toMatchObject({ x: 2, y: 2 });
    expect(noOverlaps(settled)).toBe(true);
  });

  it('removes widgets, saves version 1 and names the twins to follow live', () => {
    const widgets = [
      { ...widget('a', 0, 0), twinId: 't1' },
      { ...widget('b', 3, 0), twinId: 't2' },
      { ...widget('c', 6, 0), twinId: 't1' },
      widget('d', 9, 0),
    ];
    expect(twinIdsOf(widgets)).toEqual(['t1', 't2']);
    expect(removeWidget(widgets, 'b').map((w) => w.id)).toEqual(['a', 'c', 'd']);
    const saved = toLayout(widgets);
    expect(saved.version).toBe(1);
    expect(parseLayout(JSON.parse(JSON.stringify(saved))).widgets).toEqual(widgets);
  });
});
