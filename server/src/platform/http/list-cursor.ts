import { errors } from '../errors.js';
import type { ListParams } from './list.js';
import type { SortColumn } from './list-sql.js';

/**
 * Cursors of the large lists (list-sql.ts): `meta.nextCursor` is the last row's sort key and id, and
 * `after` continues from it through the order index (keyset), at the first page's cost at any depth.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The cursor of a page's last row: its sort key (as text) and id. */
export const encodeCursor = (key: string, id: string): string =>
  Buffer.from(JSON.stringify([key, id])).toString('base64url');

function decodeCursor(cursor: string): [string, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      typeof value[0] === 'string' &&
      UUID.test(String(value[1])) &&
      value.length === 2
    )
      return value as [string, string];
  } catch {
    // answered below
  }
  throw errors.validation('`after` is not a cursor of this list; pass meta.nextCursor of the previous page', [
    { location: 'querystring', path: '/after' },
  ]);
}

/**
 * The keyset condition for `after`: rows after the cursor in the list's order. Only for one sort
 * field that allows it; a row comparison is what the index can start from.
 */
export function afterSql(
  params: Pick<ListParams, 'orderBy'>,
  columns: Record<string, SortColumn>,
  idSql: string,
  cursor: string,
): { sql: string; params: unknown[] } {
  const [first, ...rest] = params.orderBy;
  const column = first ? columns[first.field] : undefined;
  if (!first || rest.length > 0 || !column?.keyset) {
    const allowed = Object.entries(columns)
      .filter(([, c]) => c.keyset)
      .map(([field]) => field);
    throw errors.validation(`\`after\` needs exactly one sort field of: ${allowed.join(', ')}`, [
      { location: 'querystring', path: '/sort' },
    ]);
  }
  const [key, id] = decodeCursor(cursor);
  const comparison = first.direction === 'asc' ? '>' : '<';
  return { sql: `(${column.sql}, ${idSql}) ${comparison} (?, ?::uuid)`, params: [key, id] };
}

/** Whether a cursor can be given for the next page of this order. */
export const keysetOrder = (params: Pick<ListParams, 'orderBy'>, columns: Record<string, SortColumn>) =>
  params.orderBy.length === 1 && columns[params.orderBy[0]!.field]?.keyset === true;
