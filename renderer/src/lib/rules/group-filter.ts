/**
 * A smart group's saved filter (`{"filter[tag]": ["pump"], "filter[kv.floor][not]": "2"}`) and the
 * device filter rows of the console (components/devices/DeviceFilters.svelte), both ways.
 */
export interface FilterRow {
  field: 'title' | 'tag' | 'kv';
  key: string;
  negate: boolean;
  value: string;
}

const NAME = /^filter\[(title|tag|kv\.([^\]]+))\](\[not\])?$/;

export function rowsOf(filter: Record<string, unknown>): FilterRow[] {
  const rows: FilterRow[] = [];
  for (const [name, raw] of Object.entries(filter)) {
    const match = NAME.exec(name);
    if (!match) continue;
    const field = match[1] === 'title' || match[1] === 'tag' ? match[1] : 'kv';
    const values = Array.isArray(raw) ? raw : [raw];
    for (const value of values)
      rows.push({ field, key: match[2] ?? '', negate: Boolean(match[3]), value: String(value) });
  }
  return rows;
}

/** The rows as the saved filter; empty rows are left out, repeated names become lists. */
export function filterOf(rows: FilterRow[]): Record<string, string[]> {
  const filter: Record<string, string[]> = {};
  for (const row of rows) {
    if (!row.value.trim() || (row.field === 'kv' && !row.key.trim())) continue;
    const name = `filter[${row.field === 'kv' ? `kv.${row.key.trim()}` : row.field}]${row.negate ? '[not]' : ''}`;
    (filter[name] ??= []).push(row.value.trim());
  }
  return filter;
}

/** A short human reading of a saved filter: `tag = pump, kv.floor ≠ 2`. */
export function describeFilter(filter: Record<string, unknown>): string {
  return rowsOf(filter)
    .map((row) => {
      const name = row.field === 'kv' ? row.key : row.field;
      const op = row.field === 'title' ? (row.negate ? '∌' : '∋') : row.negate ? '≠' : '=';
      return `${name} ${op} ${row.value}`;
    })
    .join(', ');
}
