import { ApiError, DEFAULT_TIMEOUT_MS } from '../../api/client';

/** The export engine's format options the time-series query's CSV takes (docs/timeseries-query.md). */
export interface SpreadsheetCsv {
  delimiter?: ';';
  decimalSeparator?: ',';
  bom?: boolean;
}

/**
 * The CSV a spreadsheet opens by double-click in the console's language: German Excel splits
 * columns at semicolons, reads decimal commas and needs a BOM to read UTF-8 (units such as m³);
 * English spreadsheets read the RFC 4180 default. The same presets as an export plan's.
 */
export const spreadsheetCsv = (language: string): SpreadsheetCsv =>
  language === 'de' ? { delimiter: ';', decimalSeparator: ',', bom: true } : {};

/**
 * "Download CSV": the chart's own query text through the time-series query with `Accept: text/csv`,
 * so the server writes the file with the CSV code every export uses (csv-writer.ts: formula cells
 * escaped, RFC 4180). The typed client reads JSON only, hence this one fetch with the same headers.
 */
export async function fetchQueryCsv(
  query: string,
  accountId: string | undefined,
  format: SpreadsheetCsv = {},
): Promise<Blob> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), DEFAULT_TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch('/xapi/v1/timeseries/query', {
      method: 'POST',
      headers: {
        accept: 'text/csv',
        'content-type': 'application/json',
        'x-requested-with': 'stellwerk-console',
      },
      credentials: 'same-origin',
      body: JSON.stringify({ query, ...(accountId ? { accountId } : {}), ...format }),
      signal: controller.signal,
    });
  } catch (error) {
    if (controller.signal.aborted) throw new ApiError(0, 'TIMEOUT', 'No answer in time');
    throw new ApiError(0, 'NETWORK_ERROR', error instanceof Error ? error.message : String(error));
  } finally {
    clearTimeout(timer);
  }
  if (!response.ok) {
    const body = (await response.json().catch(() => null)) as {
      error?: { code?: string; message?: string; details?: unknown[] };
    } | null;
    throw new ApiError(
      response.status,
      body?.error?.code ?? `HTTP_${response.status}`,
      body?.error?.message ?? `HTTP ${response.status}`,
      body?.error?.details ?? [],
    );
  }
  return response.blob();
}

/** Hands a blob to the browser as a file download. */
export function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The click starts the download synchronously; the URL may go on the next turn.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
