import { Type } from 'typebox';
import { CSV_DELIMITERS } from './csv-writer.js';

/**
 * The spreadsheet format of a CSV answer, as query or body fields: the time-series query's CSV and
 * every list download take the same three, so a German console asks both for what German Excel reads.
 */
export const CSV_FORMAT_FIELDS = {
  delimiter: Type.Optional(
    Type.Union(
      CSV_DELIMITERS.map((d) => Type.Literal(d)),
      { description: 'CSV only: the field separator (default `,`); German Excel reads `;`.' },
    ),
  ),
  decimalSeparator: Type.Optional(
    Type.Union([Type.Literal('.'), Type.Literal(',')], {
      description: 'CSV only: written in place of the `.` of numbers (default `.`); German Excel reads `,`.',
    }),
  ),
  bom: Type.Optional(
    Type.Boolean({ description: 'CSV only: start with a UTF-8 byte order mark (Excel), default false.' }),
  ),
};
