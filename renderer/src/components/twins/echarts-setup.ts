// Only the parts of echarts the state chart uses, so the lazily loaded chunk stays small.
import { LineChart } from 'echarts/charts';
import { DataZoomComponent, GridComponent, TooltipComponent } from 'echarts/components';
import { init, use } from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

use([LineChart, GridComponent, TooltipComponent, DataZoomComponent, CanvasRenderer]);

export { init };
export type { EChartsType } from 'echarts/core';
