/**
 * CSV as the server writes it (time-series query answers, exports): RFC 4180 with a header row,
 * CRLF line ends, NULL as an empty field, and a field quoted (quotes doubled) when it holds a
 * comma, a quote, CR or LF, or starts or ends with whitespace.
 *
 * Formula cells: spreadsheets run a cell that starts with `=`, `+`, `-` or `@` (and some a tab or
 * CR before one) as a formula, so an untrusted text could call functions or links when a user opens
 * an export. By default every *string* cell starting with one of those characters gets a leading
 * `'` (OWASP "CSV injection"), which spreadsheets show as text. Numbers the server writes as numbers
 * are data and stay as they are (`-3.5` stays `-3.5`); a text that merely looks like a number is
 * still text and is escaped (`'-3.5`). `escapeFormulas: false` writes every cell unaltered.
 *
 * Export plans and the time-series query's CSV choose the delimiter (`,` `;` tab `|`) and the
 * decimal separator of numbers; a field is then quoted when it holds that delimiter instead of a comma.
 */

import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';

export type CsvValue = string | number | boolean | null | undefined;

export interface CsvOptions {
  /** Prefix string cells that a spreadsheet would run as a formula with `'` (default true). */
  escapeFormulas?: boolean;
  /** Field separator (default `,`); German Excel reads `;`. */
  delimiter?: CsvDelimiter;
  /** Written in place of the `.` of numbers (default `.`); German Excel reads `,`. */
  decimalSeparator?: '.' | ',';
}

export const CSV_DELIMITERS = [',', ';', '\t', '|'] as const;
export type CsvDelimiter = (typeof CSV_DELIMITERS)[number];

/** The byte order mark some spreadsheets (Excel) need to read a CSV file as UTF-8. */
export const UTF8_BOM = '\uFEFF';

/** The characters OWASP lists as starting a formula: `=`, `+`, `-`, `@`, tab and CR. */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;
/** Quoting rules per delimiter other than the comma, built once. */
const QUOTE_RULES: Record<CsvDelimiter, RegExp> = {
  ',': NEEDS_QUOTES,
  ';': /[";\r\n]|^\s|\s$/,
  '\t': /["\t\r\n]|^\s|\s$/,
  '|': /["|\r\n]|^\s|\s$/,
};

export function toCsv(
  header: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<CsvValue>>,
  options: CsvOptions = {},
): string {
  return [header, ...rows].map((row) => csvLine(row, options)).join('');
}

/** Records written between two turns of the event loop: about a millisecond of work. */
const ROWS_PER_TURN = 1000;

/**
 * The same CSV as a stream of pieces of ROWS_PER_TURN records, with a turn of the event loop between
 * them: 100,000 rows written in one go held the main thread (and so MQTT acknowledgements) for
 * over 100 ms.
 */
export function csvStream(
  header: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<CsvValue>>,
  options: CsvOptions & { bom?: boolean } = {},
): Readable {
  return Readable.from(
    (async function* () {
      yield (options.bom ? UTF8_BOM : '') + csvLine(header, options);
      for (let i = 0; i < rows.length; i += ROWS_PER_TURN) {
        if (i > 0) await nextTurn();
        yield rows
          .slice(i, i + ROWS_PER_TURN)
          .map((row) => csvLine(row, options))
          .join('');
      }
    })(),
    { objectMode: false },
  );
}

/** One record with its CRLF, for writers that stream rows. */
export function csvLine(row: ReadonlyArray<CsvValue>, options: CsvOptions = {}): string {
  return `${row.map((value) => csvField(value, options)).join(options.delimiter ?? ',')}\r\n`;
}

/**
 * One field. A number with a decimal comma is text to the CSV layer: with `,` as the delimiter too
 * it is quoted (`"1,5"`), which every reader takes as one field.
 */
export function csvField(value: CsvValue, options: CsvOptions = {}): string {
  if (value === null || value === undefined) return '';
  const quote = QUOTE_RULES[options.delimiter ?? ','];
  if (typeof value === 'number') {
    const text = String(value);
    if (options.decimalSeparator !== ',') return text;
    const comma = text.replace('.', ',');
    return quote.test(comma) ? `"${comma}"` : comma;
  }
  if (typeof value !== 'string') return String(value);
  const text = options.escapeFormulas !== false && FORMULA_START.test(value) ? `'${value}` : value;
  return quote.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
