import { visualAxis } from '../../lib/dashboards/dashboard-data.svelte';
import type { ChartState } from '../../lib/charts/chart-series';
import { valueFormatOf } from '../../lib/format/number-format';
import type { TwinState } from '../../lib/twins/twin-api';

/** Value types a line chart can draw (booleans as 1/0). */
export const isChartable = (state: TwinState) => ['number', 'integer', 'boolean'].includes(state.valueType);

/** A data state as the chart draws it: its name, axis unit and bounds, decimals. */
export function chartStateOf(state: TwinState): ChartState {
  const axis = visualAxis(state);
  return {
    id: state.id,
    name: state.title || state.key,
    unit: axis.unit ?? state.unit ?? '',
    valueType: state.valueType,
    decimals: valueFormatOf(state).decimals ?? null,
    min: axis.min,
    max: axis.max,
  };
}
