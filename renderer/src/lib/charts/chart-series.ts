import type { ChartPoint } from './chart-query';
import type { TimeWindow } from './chart-range';
import { timeTicks, valueTicks, type ValueTicks } from './chart-ticks';

/**
 * From states and their points to an echarts option: one y axis per unit (states with the same
 * unit share it), at most MAX_AXES, alternating left and right; a mean line with a min/max band
 * per state when the points are aggregated, a plain line for raw points.
 */

/** What a chart needs to know of a data state. */
export interface ChartState {
  id: string;
  /** The legend's name: title, else key. */
  name: string;
  /** The axis unit (the state's `meta.visual.yAxis.unit`, else its unit); '' for none. */
  unit: string;
  valueType: string;
  decimals: number | null;
  /** Bounds from the state's y-axis settings. */
  min: number | null;
  max: number | null;
}

/** Four axes (two each side) are as many as a reader can match to lines. */
export const MAX_AXES = 4;
const AXIS_WIDTH = 56;

export interface ChartAxis {
  unit: string;
  min: number | null;
  max: number | null;
  stateIds: string[];
}

export interface AxisPlan {
  axes: ChartAxis[];
  /** The axis index of each drawn state. */
  axisOf: Map<string, number>;
  /** States left out: their unit would need a fifth axis. */
  omitted: ChartState[];
}

export function planAxes(states: ChartState[]): AxisPlan {
  const axes: ChartAxis[] = [];
  const axisOf = new Map<string, number>();
  const omitted: ChartState[] = [];
  for (const state of states) {
    let index = axes.findIndex((axis) => axis.unit === state.unit);
    if (index < 0) {
      if (axes.length >= MAX_AXES) {
        omitted.push(state);
        continue;
      }
      index = axes.push({ unit: state.unit, min: state.min, max: state.max, stateIds: [] }) - 1;
    }
    const axis = axes[index]!;
    // Shared bounds only when every state on the axis agrees; else the axis fits the data.
    if (axis.stateIds.length > 0 && (axis.min !== state.min || axis.max !== state.max)) {
      axis.min = null;
      axis.max = null;
    }
    axis.stateIds.push(state.id);
    axisOf.set(state.id, index);
  }
  return { axes, axisOf, omitted };
}

export interface ChartLook {
  text: string;
  muted: string;
  border: string;
  surface: string;
  series: string[];
}

/** The console's formatting, handed in so this module stays free of UI state. */
export interface ChartFormat {
  number(value: number, state?: ChartState): string;
  axisTime(at: number, spanMs: number): string;
  dateTime(at: number): string;
  zoneLabel: string;
  /** The zone whose wall clock the time ticks sit on (whole hours, midnights). */
  timeZone: string;
  /** "min–max" label of the band in the tooltip. */
  range: string;
}

export interface ChartDrawing {
  states: ChartState[];
  points: Map<string, ChartPoint[]>;
  /** The x axis' extent: the chosen range. */
  window: TimeWindow;
  /** The zoomed part of it, or null for all of it. */
  zoom: TimeWindow | null;
  look: ChartLook;
  format: ChartFormat;
  /** Compact (a dashboard tile): no slider, smaller margins. */
  compact?: boolean;
  /** The chart's size in pixels: how many time and value ticks fit. */
  width?: number;
  height?: number;
}

/** Room a value tick's label needs, one above the other. */
const VALUE_LABEL_HEIGHT = 30;

/** Room a time tick's label needs ("26 Nov", "10:15") with space around it. */
const TIME_LABEL_WIDTH = 90;

/**
 * The time axis' ticks and labels for the part of the window in view: whole steps of the zone's wall
 * clock, as many as fit `plotWidth`. Also set alone after a zoom or resize (echarts' own time ticks
 * would start at the window's odd ends and mix month starts into day steps).
 */
export function timeAxisTicks(
  visible: TimeWindow,
  plotWidth: number,
  format: Pick<ChartFormat, 'axisTime' | 'timeZone'>,
): { axisLabel: Record<string, unknown>; axisTick: Record<string, unknown> } {
  const maxTicks = Math.min(10, Math.max(2, Math.floor(plotWidth / TIME_LABEL_WIDTH)));
  const ticks = timeTicks(visible.from, visible.to, maxTicks, format.timeZone);
  const span = visible.to - visible.from;
  return {
    axisLabel: { customValues: ticks, formatter: (at: number) => format.axisTime(at, span) },
    axisTick: { customValues: ticks },
  };
}

/**
 * The ticks an option draws, as a reader sees them: the time axis' labels, and each y axis' values
 * (bounds and step as set; null for an axis echarts fits itself).
 */
export function drawnTicks(option: Record<string, unknown>): { time: string[]; values: (number[] | null)[] } {
  const x = option.xAxis as { axisLabel: { customValues: number[]; formatter: (at: number) => string } };
  const values = (option.yAxis as { min?: number; max?: number; interval?: number }[]).map((axis) => {
    const { min, max, interval } = axis;
    if (min === undefined || max === undefined || !interval) return null;
    const count = Math.round((max - min) / interval);
    return Array.from({ length: count + 1 }, (_, index) => Number((min + index * interval).toPrecision(12)));
  });
  return { time: x.axisLabel.customValues.map((at) => x.axisLabel.formatter(at)), values };
}

/** The plot's width inside the chart: the chart's less the y axes' room. */
export const plotWidth = (width: number, axes: number) => width - 24 - AXIS_WIDTH * Math.max(axes, 1.4);

/**
 * Each y axis' nice bounds and step: over its bounds where the states give them, else over its
 * states' points (band included); on/off states keep 0 and 1. Null lets echarts fit an axis without data.
 */
function axisTicks(
  plan: AxisPlan,
  states: ChartState[],
  points: Map<string, ChartPoint[]>,
  maxTicks: number,
): (ValueTicks | null)[] {
  return plan.axes.map((axis) => {
    const onAxis = states.filter((state) => axis.stateIds.includes(state.id));
    if (onAxis.every((state) => state.valueType === 'boolean')) return { min: 0, max: 1, interval: 1 };
    let low = Infinity;
    let high = -Infinity;
    for (const state of onAxis)
      for (const point of points.get(state.id) ?? [])
        for (const value of point.slice(1))
          if (typeof value === 'number' && Number.isFinite(value)) {
            low = Math.min(low, value);
            high = Math.max(high, value);
          }
    const exact = axis.min !== null && axis.max !== null;
    low = axis.min ?? low;
    high = axis.max ?? high;
    return Number.isFinite(low) && Number.isFinite(high) ? valueTicks(low, high, maxTicks, exact) : null;
  });
}

export const colourOf = (look: ChartLook, index: number) => look.series[index % look.series.length]!;

/** The echarts option for a drawing (used with `notMerge`, so it carries the zoom). */
export function chartOption(drawing: ChartDrawing): Record<string, unknown> {
  const { states, points, window, zoom, look, format, compact = false } = drawing;
  const plan = planAxes(states);
  const drawn = states.filter((state) => plan.axisOf.has(state.id));
  const leftAxes = Math.ceil(plan.axes.length / 2);
  const rightAxes = Math.floor(plan.axes.length / 2);
  const series: Record<string, unknown>[] = [];
  drawn.forEach((state, index) => {
    const colour = colourOf(look, index);
    const data = points.get(state.id) ?? [];
    const yAxisIndex = plan.axisOf.get(state.id)!;
    const banded = data.some((point) => point.length === 4);
    const step = state.valueType === 'boolean' ? 'end' : undefined;
    series.push({
      id: `line:${state.id}`,
      name: state.name,
      type: 'line',
      yAxisIndex,
      data,
      encode: { x: 0, y: 1 },
      showSymbol: data.length < 60,
      symbolSize: 5,
      step,
      lineStyle: { color: colour, width: 2 },
      itemStyle: { color: colour },
      z: 3,
    });
    if (!banded) return;
    // The band: min as an invisible base and max−min stacked on it, filled.
    const stack = `band:${state.id}`;
    series.push(
      {
        id: `min:${state.id}`,
        type: 'line',
        yAxisIndex,
        stack,
        data: data.map((point) => [point[0], point[2]]),
        lineStyle: { opacity: 0 },
        showSymbol: false,
        silent: true,
        step,
        tooltip: { show: false },
      },
      {
        id: `max:${state.id}`,
        type: 'line',
        yAxisIndex,
        stack,
        data: data.map((point) => [point[0], (point[3] ?? 0) - (point[2] ?? 0)]),
        lineStyle: { opacity: 0 },
        areaStyle: { color: colour, opacity: 0.18 },
        showSymbol: false,
        silent: true,
        step,
        tooltip: { show: false },
      },
    );
  });

  const byId = new Map(drawn.map((state) => [state.id, state]));
  const bottom = compact ? 28 : 64;
  const plotHeight = (drawing.height ?? 300) - 28 - bottom;
  const ticks = axisTicks(
    plan,
    drawn,
    points,
    Math.min(6, Math.max(2, Math.floor(plotHeight / VALUE_LABEL_HEIGHT))),
  );
  const time = timeAxisTicks(zoom ?? window, plotWidth(drawing.width ?? 800, plan.axes.length), format);
  return {
    animation: false,
    grid: {
      left: 12 + AXIS_WIDTH * leftAxes,
      right: 12 + AXIS_WIDTH * Math.max(rightAxes, compact ? 0 : 0.4),
      top: 28,
      bottom,
    },
    tooltip: {
      trigger: 'axis',
      backgroundColor: look.surface,
      borderColor: look.border,
      textStyle: { color: look.text },
      formatter: (params: unknown) => tooltipText(params, byId, format),
    },
    xAxis: {
      type: 'time',
      min: window.from,
      max: window.to,
      axisLine: { lineStyle: { color: look.border } },
      axisLabel: { color: look.muted, hideOverlap: true, ...time.axisLabel },
      axisTick: time.axisTick,
      axisPointer: { label: { formatter: (at: { value: number }) => format.dateTime(at.value) } },
      name: format.zoneLabel,
      nameTextStyle: { color: look.muted },
      splitLine: { show: false },
    },
    yAxis: plan.axes.map((axis, index) => {
      const colour =
        axis.stateIds.length === 1
          ? colourOf(
              look,
              drawn.findIndex((s) => s.id === axis.stateIds[0]),
            )
          : look.muted;
      return {
        type: 'value',
        position: index % 2 === 0 ? 'left' : 'right',
        offset: Math.floor(index / 2) * AXIS_WIDTH,
        name: axis.unit,
        nameTextStyle: { color: colour },
        min: ticks[index]?.min ?? axis.min ?? undefined,
        max: ticks[index]?.max ?? axis.max ?? undefined,
        interval: ticks[index]?.interval,
        scale: axis.min === null,
        axisLine: { show: plan.axes.length > 1, lineStyle: { color: colour } },
        axisLabel: { color: look.muted, formatter: (n: number) => format.number(n) },
        // One grid is enough: the other axes' lines would cross it.
        splitLine: { show: index === 0, lineStyle: { color: look.border, type: 'dashed' } },
      };
    }),
    dataZoom: [
      { type: 'inside', xAxisIndex: 0, filterMode: 'none', ...zoomValues(zoom) },
      ...(compact
        ? []
        : [
            {
              type: 'slider',
              xAxisIndex: 0,
              filterMode: 'none',
              height: 20,
              bottom: 8,
              showDetail: false,
              ...zoomValues(zoom),
            },
          ]),
    ],
    series,
  };
}

const zoomValues = (zoom: TimeWindow | null) =>
  zoom ? { startValue: zoom.from, endValue: zoom.to } : { start: 0, end: 100 };

interface TooltipParam {
  seriesId?: string;
  value?: unknown;
  marker?: string;
  axisValue?: number;
}

/** One line per state: value, or mean with its min–max when aggregated. */
export function tooltipText(params: unknown, states: Map<string, ChartState>, format: ChartFormat): string {
  const list = (Array.isArray(params) ? params : [params]) as TooltipParam[];
  const lines: string[] = [];
  let at: number | undefined;
  for (const param of list) {
    if (!param.seriesId?.startsWith('line:')) continue;
    const state = states.get(param.seriesId.slice(5));
    const point = param.value as number[] | undefined;
    if (!state || !Array.isArray(point)) continue;
    at ??= point[0];
    const value = `${format.number(point[1]!, state)}`;
    const band =
      point.length === 4
        ? ` (${format.range} ${format.number(point[2]!, state)} – ${format.number(point[3]!, state)})`
        : '';
    lines.push(
      `${param.marker ?? ''}${escapeHtml(state.name)}: <b>${escapeHtml(value)}</b>${escapeHtml(band)}`,
    );
  }
  if (at === undefined) return '';
  return [escapeHtml(format.dateTime(at)), ...lines].join('<br>');
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
