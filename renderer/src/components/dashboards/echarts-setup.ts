// The parts of echarts the dashboard widgets use (line, gauge, pie as donut), loaded with the first
// chart widget; echarts' core is shared with the twin page's chart chunk.
import { GaugeChart, LineChart, PieChart } from 'echarts/charts';
import { GridComponent, TooltipComponent } from 'echarts/components';
import { init, use } from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

use([LineChart, GaugeChart, PieChart, GridComponent, TooltipComponent, CanvasRenderer]);

export { init };
export type { EChartsType } from 'echarts/core';
