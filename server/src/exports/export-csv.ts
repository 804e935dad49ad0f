import { csvField, csvLine, UTF8_BOM, type CsvOptions, type CsvValue } from '../platform/csv/csv-writer.js';
import { exportColumns } from './export-columns.js';
import { exportRows, type ExportReads, type ExportSource } from './export-engine.js';
import type { ExportDefinition } from './export-plan.types.js';

export const csvOptionsOf = (def: ExportDefinition): CsvOptions => ({
  delimiter: def.format.delimiter,
  decimalSeparator: def.format.decimalSeparator,
  escapeFormulas: def.format.escapeFormulas,
});

/**
 * The export as CSV text in pieces: the BOM when asked, the header row, then one piece per batch
 * of rows; `onRows` hears how many rows each piece holds (job progress).
 */
export async function* exportCsv(
  def: ExportDefinition,
  source: ExportSource,
  reads: ExportReads,
  range: { from: Date; to: Date },
  onRows: (count: number) => void = () => undefined,
): AsyncGenerator<string> {
  const options = csvOptionsOf(def);
  const header = exportColumns(def, source.states).map((c) => c.header);
  yield (def.format.bom ? UTF8_BOM : '') + csvLine(header, options);
  for await (const rows of exportRows(def, source, reads, range)) {
    let text = '';
    for (const row of rows) text += csvLine(row, options);
    yield text;
    onRows(rows.length);
  }
}

export const PREVIEW_ROWS = 20;

/** A cell as the file shows it once a spreadsheet has read it: formatted and escaped, not quoted. */
function previewCell(value: CsvValue, options: CsvOptions): string {
  const field = csvField(value, options);
  return field.startsWith('"') ? field.slice(1, -1).replace(/""/g, '"') : field;
}

/** The header and the first PREVIEW_ROWS rows, each cell as the file writes it. */
export async function exportPreview(
  def: ExportDefinition,
  source: ExportSource,
  reads: ExportReads,
  range: { from: Date; to: Date },
): Promise<{ columns: string[]; rows: string[][] }> {
  const options = csvOptionsOf(def);
  const rows: string[][] = [];
  for await (const batch of exportRows(def, source, reads, range)) {
    for (const row of batch) {
      if (rows.length >= PREVIEW_ROWS) break;
      rows.push(row.map((cell) => previewCell(cell, options)));
    }
    if (rows.length >= PREVIEW_ROWS) break;
  }
  return { columns: exportColumns(def, source.states).map((c) => c.header), rows };
}
