/**
 * RFC 4180 CSV: a header row, CRLF line ends, and a field quoted (quotes doubled) when it holds a
 * comma, a quote, CR or LF, or starts or ends with a space. NULL is an empty field. Values are
 * written as they are; spreadsheet users opening exports should know formulas are not escaped.
 */
export function toCsv(header: string[], rows: ReadonlyArray<ReadonlyArray<string | number | null>>): string {
  const lines = [header.map(csvField), ...rows.map((row) => row.map(csvField))];
  return lines.map((fields) => `${fields.join(',')}\r\n`).join('');
}

export function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
