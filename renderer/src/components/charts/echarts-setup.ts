// Only the parts of echarts the line chart uses (lines, axes, tooltip, zoom), so the lazily loaded
// chunk stays small; echarts' core is shared with the dashboard's gauge and donut chunk.
import { LineChart } from 'echarts/charts';
import { DataZoomComponent, GridComponent, TooltipComponent } from 'echarts/components';
import { init, use } from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

use([LineChart, GridComponent, TooltipComponent, DataZoomComponent, CanvasRenderer]);

export { init };
export type { EChartsType } from 'echarts/core';
