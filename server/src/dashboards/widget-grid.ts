/**
 * The vocabulary of a dashboard's widget grid that the server checks and the console offers: one
 * list, imported by both (this module has no imports, so the console's bundle can take it).
 */
export const GRID_COLUMNS = 12;
export const MAX_WIDGETS = 100;

export const WIDGET_TYPES = [
  'line-chart',
  'value',
  'gauge',
  'donut',
  'boolean',
  'raw-values',
  'twin-button',
  'map',
  'dashboard',
] as const;
export type WidgetType = (typeof WIDGET_TYPES)[number];

/** The time ranges a chart widget may show (the console's range picker). */
export const CHART_RANGES = ['5m', '15m', '1h', '6h', '24h', '7d', '30d', '90d', '1y'] as const;
export type ChartRange = (typeof CHART_RANGES)[number];
