import type { Messages } from '../../i18n/en';
import type { DashboardData } from '../../lib/dashboards/dashboard-data.svelte';
import type { Widget } from '../../lib/dashboards/layout';
import type { TwinState } from '../../lib/twins/twin-api';

/** What the widget dialog sets (the place and size are the grid's). */
export type WidgetSettings = Omit<Widget, 'id' | 'x' | 'y' | 'w' | 'h'>;

/** Types bound to a twin and data states; the map and the nested dashboard are not. */
export const STATE_TYPES: Widget['type'][] = [
  'line-chart',
  'value',
  'gauge',
  'donut',
  'boolean',
  'raw-values',
];
/** Types that show several states. */
export const MULTI_STATE_TYPES: Widget['type'][] = ['line-chart', 'donut', 'raw-values'];

export const statesOf = (widget: Widget, data: DashboardData): TwinState[] =>
  (widget.stateIds ?? []).map((id) => data.states[id]).filter((state): state is TwinState => Boolean(state));

/** Why a widget cannot show its data, or null when it can. */
export function widgetProblem(
  widget: Widget,
  data: DashboardData,
  t: Messages['dashboards']['widget'],
): string | null {
  const needsTwin = STATE_TYPES.includes(widget.type) || widget.type === 'twin-button';
  if (!needsTwin) return null;
  if (!widget.twinId) return t.notBound;
  if (!(widget.twinId in data.twins)) return null; // still loading
  if (data.twins[widget.twinId] === null) return t.twinMissing;
  if (!STATE_TYPES.includes(widget.type)) return null;
  if (!widget.stateIds?.length) return t.notBound;
  if (statesOf(widget, data).length === 0) return t.stateMissing;
  return null;
}

/** The widget's own title, else its state's, twin's or dashboard's, else its type. */
export function widgetTitle(
  widget: Widget,
  data: DashboardData,
  dashboardTitles: Record<string, string>,
  t: Messages['dashboards'],
): string {
  if (widget.title.trim()) return widget.title.trim();
  const states = statesOf(widget, data);
  const twin = widget.twinId ? data.twins[widget.twinId] : undefined;
  if (states.length === 1 && STATE_TYPES.includes(widget.type)) {
    const state = states[0]!;
    return twin ? `${twin.title} · ${state.title || state.key}` : state.title || state.key;
  }
  if (twin) return twin.title;
  if (widget.type === 'dashboard' && widget.dashboardId && dashboardTitles[widget.dashboardId])
    return dashboardTitles[widget.dashboardId]!;
  return t.types[widget.type];
}
