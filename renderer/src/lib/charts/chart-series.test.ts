import { describe, expect, it } from 'vitest';
import type { ChartPoint } from './chart-query';
import {
  chartOption,
  MAX_AXES,
  planAxes,
  tooltipText,
  type ChartFormat,
  type ChartState,
} from './chart-series';

const state = (id: string, unit: string, bounds: { min?: number; max?: number } = {}): ChartState => ({
  id,
  name: id.toUpperCase(),
  unit,
  valueType: 'number',
  decimals: null,
  min: bounds.min ?? null,
  max: bounds.max ?? null,
});

const look = {
  text: '#000',
  muted: '#555',
  border: '#ddd',
  surface: '#fff',
  series: ['#a00', '#0a0', '#00a'],
};
const format: ChartFormat = {
  number: (value, s) => `${value}${s?.unit ? ` ${s.unit}` : ''}`,
  axisTime: (at) => String(at),
  dateTime: (at) => `T${at}`,
  zoneLabel: 'UTC',
  timeZone: 'UTC',
  range: 'min–max',
};

describe('y axes per unit', () => {
  it('gives each unit one axis, shared by the states with that unit, alternating sides', () => {
    const plan = planAxes([state('flow', 'm³/h'), state('pressure', 'bar'), state('inflow', 'm³/h')]);
    expect(plan.axes.map((axis) => [axis.unit, axis.stateIds])).toEqual([
      ['m³/h', ['flow', 'inflow']],
      ['bar', ['pressure']],
    ]);
    expect(Object.fromEntries(plan.axisOf)).toEqual({ flow: 0, pressure: 1, inflow: 0 });
    const option = chartOption({
      states: [state('flow', 'm³/h'), state('pressure', 'bar')],
      points: new Map(),
      window: { from: 0, to: 1 },
      zoom: null,
      look,
      format,
    });
    expect(
      (option.yAxis as { position: string; name: string }[]).map((axis) => [axis.position, axis.name]),
    ).toEqual([
      ['left', 'm³/h'],
      ['right', 'bar'],
    ]);
  });

  it('leaves out states whose unit would need more than four axes', () => {
    const units = ['a', 'b', 'c', 'd', 'e'];
    const plan = planAxes(units.map((unit) => state(`s-${unit}`, unit)));
    expect(plan.axes).toHaveLength(MAX_AXES);
    expect(plan.omitted.map((s) => s.id)).toEqual(['s-e']);
  });

  it('keeps y bounds only where the states of an axis agree on them', () => {
    const agreed = planAxes([state('a', 'bar', { min: 0, max: 10 }), state('b', 'bar', { min: 0, max: 10 })]);
    expect(agreed.axes[0]).toMatchObject({ min: 0, max: 10 });
    const differing = planAxes([
      state('a', 'bar', { min: 0, max: 10 }),
      state('b', 'bar', { min: 0, max: 16 }),
    ]);
    expect(differing.axes[0]).toMatchObject({ min: null, max: null });
  });
});

describe('series', () => {
  const points = new Map<string, ChartPoint[]>([
    [
      'flow',
      [
        [1000, 4, 2, 7],
        [2000, 5, 5, 5],
      ],
    ],
    [
      'pressure',
      [
        [1000, 1.5],
        [1500, 1.75],
      ],
    ],
  ]);
  const option = chartOption({
    states: [state('flow', 'm³/h'), state('pressure', 'bar')],
    points,
    window: { from: 0, to: 3000 },
    zoom: { from: 500, to: 2500 },
    look,
    format,
  });
  const series = option.series as { id: string; data: unknown[]; yAxisIndex: number; stack?: string }[];

  it('draws a mean line with a min/max band when aggregated, a plain line for raw points', () => {
    expect(series.map((s) => s.id)).toEqual(['line:flow', 'min:flow', 'max:flow', 'line:pressure']);
    expect(series[1]).toMatchObject({
      stack: 'band:flow',
      data: [
        [1000, 2],
        [2000, 5],
      ],
      yAxisIndex: 0,
    });
    // The band's upper part is stacked on the minimum: max − min.
    expect(series[2]).toMatchObject({
      stack: 'band:flow',
      data: [
        [1000, 5],
        [2000, 0],
      ],
    });
    expect(series[3]).toMatchObject({
      yAxisIndex: 1,
      data: [
        [1000, 1.5],
        [1500, 1.75],
      ],
    });
  });

  it('spans the chosen window and carries the zoom, with inside zoom and a slider', () => {
    expect(option.xAxis).toMatchObject({ type: 'time', min: 0, max: 3000 });
    expect(option.dataZoom).toEqual([
      expect.objectContaining({ type: 'inside', startValue: 500, endValue: 2500 }),
      expect.objectContaining({ type: 'slider', startValue: 500, endValue: 2500 }),
    ]);
  });

  it('steps the axes evenly: y by 1, 2 or 5 × 10ⁿ over the points and their band, time on whole minutes', () => {
    const from = Date.parse('2026-11-28T09:17:23Z');
    const drawn = chartOption({
      states: [state('flow', 'm³/h'), state('pressure', 'bar', { min: 0, max: 137 })],
      points: new Map<string, ChartPoint[]>([
        [
          'flow',
          [
            [from + 60_000, 13.7, 3.1, 27.4],
            [from + 120_000, 20, 18, 41.3],
          ],
        ],
      ]),
      window: { from, to: from + 3_600_000 },
      zoom: null,
      look,
      format,
      width: 800,
    });
    const [flow, pressure] = drawn.yAxis as { min: number; max: number; interval: number }[];
    expect([flow!.min, flow!.max, flow!.interval]).toEqual([0, 50, 10]);
    expect([pressure!.min, pressure!.max, pressure!.interval]).toEqual([0, 150, 50]);
    const ticks = (drawn.xAxis as { axisLabel: { customValues: number[] } }).axisLabel.customValues;
    expect(ticks.map((at) => new Date(at).toISOString().slice(11, 16))).toEqual([
      '09:20',
      '09:30',
      '09:40',
      '09:50',
      '10:00',
      '10:10',
    ]);
  });

  it('shows value, or mean and band, per state in the tooltip, escaped', () => {
    const states = new Map([
      ['flow', state('flow', 'm³/h')],
      ['pressure', { ...state('pressure', 'bar'), name: '<b>P</b>' }],
    ]);
    const text = tooltipText(
      [
        { seriesId: 'line:flow', value: [1000, 4, 2, 7], marker: '' },
        { seriesId: 'min:flow', value: [1000, 2] },
        { seriesId: 'line:pressure', value: [1000, 1.5], marker: '' },
      ],
      states,
      format,
    );
    expect(text).toBe(
      'T1000<br>FLOW: <b>4 m³/h</b> (min–max 2 m³/h – 7 m³/h)<br>&lt;b&gt;P&lt;/b&gt;: <b>1.5 bar</b>',
    );
  });
});
