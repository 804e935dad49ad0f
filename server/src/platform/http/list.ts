import { errors } from '../errors.js';
import { MAX_PAGE_SIZE } from './schemas.js';

export interface ListParams {
  page: number;
  pageSize: number;
  offset: number;
  /** Field → direction, in the order given. Fields are the API names, already checked. */
  orderBy: Array<{ field: string; direction: 'asc' | 'desc' }>;
  search: string | undefined;
}

export interface ListResult<T> {
  data: T[];
  meta: ListResultMeta;
}

export interface ListResultMeta {
  page: number;
  pageSize: number;
  total: number;
  /** `total` is the planner's estimate (above list-sql.ts COUNT_CAP), not a count. */
  totalEstimated?: boolean;
  /** Pass as `after` for the rows after this page (lists with keyset paging). */
  nextCursor?: string;
}

/**
 * Parses paging and sort the one way every list does. A `+` in a query string arrives as a
 * space (form encoding), so a leading space means ascending as well; `%2B` is not required.
 */
export function parseListQuery(
  query: { page?: number; pageSize?: number; sort?: string; searchItems?: string },
  sortable: readonly string[],
  defaultSort: string,
): ListParams {
  const page = query.page ?? 1;
  const pageSize = Math.min(query.pageSize ?? 25, MAX_PAGE_SIZE);
  const orderBy: ListParams['orderBy'] = [];
  const sortText = query.sort?.trim() ? query.sort : defaultSort;
  for (const part of sortText.split(',')) {
    const token = part.replace(/^\s+/, '+').trim();
    if (token === '') continue;
    const direction = token.startsWith('-') ? 'desc' : 'asc';
    const field = token.replace(/^[+-]/, '');
    if (!sortable.includes(field)) {
      throw errors.validation(`Cannot sort by "${field}"; sortable fields: ${sortable.join(', ')}`, [
        { location: 'querystring', path: '/sort', field },
      ]);
    }
    if (!orderBy.some((o) => o.field === field)) orderBy.push({ field, direction });
  }
  const search = query.searchItems?.trim() || undefined;
  return { page, pageSize, offset: (page - 1) * pageSize, orderBy, search };
}

export const listResult = <T>(
  data: T[],
  total: number,
  params: ListParams,
  more: Pick<ListResultMeta, 'totalEstimated' | 'nextCursor'> = {},
): ListResult<T> => ({
  data,
  meta: { page: params.page, pageSize: params.pageSize, total, ...more },
});

/** Escapes LIKE wildcards so a search for `50%` means the text, not a pattern. */
export const likePattern = (search: string): string => `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
