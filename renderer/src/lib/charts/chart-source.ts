import { api } from '../../api/client';
import { chartQueryText, type ChartAnswer, type ChartQuery } from './chart-query';
import { i18n } from '../i18n.svelte';
import { fetchQueryCsv, spreadsheetCsv } from './chart-download';

/** Where a chart reads its points: the time-series query, or a public dashboard's history route. */
export interface ChartSource {
  run(query: ChartQuery, accountId: string | undefined): Promise<ChartAnswer>;
  /** The same query as CSV; absent where the viewer may not run queries (a public dashboard). */
  csv?: (query: ChartQuery, accountId: string | undefined) => Promise<Blob>;
}

/** The signed-in console: `POST /xapi/v1/timeseries/query`, JSON to draw, CSV to download. */
export const consoleChartSource: ChartSource = {
  run: (query, accountId) =>
    api.call('POST /xapi/v1/timeseries/query', {
      body: { query: chartQueryText(query), ...(accountId ? { accountId } : {}) },
    }),
  csv: (query, accountId) => fetchQueryCsv(chartQueryText(query), accountId, spreadsheetCsv(i18n.language)),
};
