import { untrack } from 'svelte';
import { spreadsheetCsv, type SpreadsheetCsv } from './charts/chart-download';
import { hashParam, hashPath, replaceHashParams } from './hash-query';
import { i18n } from './i18n.svelte';
import { ListLoader, type ListFields, type ListLoaderOptions, type ListReply } from './list-loader';

export type { ListQuery, ListReply } from './list-loader';

export interface ListStateOptions<R extends ListReply> extends ListLoaderOptions<R> {
  sort: string;
  pageSize?: number;
  /** The page's own filters to keep in the address beside the search and sort (empty: none). */
  address?: () => Record<string, string | undefined>;
}

// A sort key as the list routes take it (`title`, `-lastSeen`, `meta.x`); anything else in an
// address is ignored rather than sent.
const SORT_KEY = /^-?[A-Za-z][\w.]*$/;

/**
 * The state of a paged, sorted, searchable list page: rows, total, loading and error as runes, a
 * reload whenever sort, page, page size or a watched filter changes, and the search box (debounced
 * `onSearchInput`, or `searchNow` behind ListToolbar, which waits for the pause itself).
 * The search text and a sort other than the page's default live in the address
 * (`#/devices?q=pump&sort=-lastSeen`) with the filters the page names, so a reload, the back button
 * or a copied link opens the list as it was. Create it while the page component initialises (it
 * sets up effects).
 */
export class ListState<R extends ListReply<{ id: string }>> implements ListFields<R> {
  rows = $state([] as unknown[] as R['data']);
  total = $state(0);
  totalEstimated = $state(false);
  loading = $state(true);
  error = $state<unknown>(null);
  page = $state(1);
  pageSize = $state(25);
  sort = $state('');
  search = $state('');
  private readonly loader: ListLoader<R>;

  constructor(options: ListStateOptions<R>) {
    const linkedSort = hashParam('sort');
    this.sort = linkedSort && SORT_KEY.test(linkedSort) ? linkedSort : options.sort;
    this.search = hashParam('q') ?? '';
    this.pageSize = options.pageSize ?? 25;
    this.loader = new ListLoader(this, options);
    const path = hashPath();
    $effect(() => {
      const params = {
        q: this.search.trim() || undefined,
        sort: this.sort === options.sort ? undefined : this.sort,
        ...options.address?.(),
      };
      untrack(() => replaceHashParams(path, params));
    });
    $effect(() => {
      void [this.sort, this.page, this.pageSize, options.watch?.()];
      // Only the parameters above count: the search text reloads through the search functions.
      untrack(() => void this.loader.reload());
    });
    $effect(() => () => this.loader.dispose());
  }

  reload = (): Promise<void> => this.loader.reload();
  searchNow = (): void => this.loader.searchNow();
  onSearchInput = (): void => this.loader.onSearchInput();
  /** For the Pager's `onchange`. */
  setPage = (page: number, pageSize: number): void => {
    this.page = page;
    this.pageSize = pageSize;
  };
  /** Puts a changed row in place (after an action on it). */
  replaceRow = (updated: R['data'][number]): void => this.loader.replaceRow(updated);
}

/**
 * A list's CSV download parameters: its search and sort (the server reads every page itself), in the
 * spreadsheet format of the console's language (German Excel: semicolons, decimal commas, a BOM).
 */
export function csvQuery(
  list: { sort: string; search: string },
  language: string = i18n.language,
): SpreadsheetCsv & { format: 'csv'; sort: string; searchItems?: string } {
  const search = list.search.trim();
  return {
    format: 'csv',
    sort: list.sort,
    ...(search ? { searchItems: search } : {}),
    ...spreadsheetCsv(language),
  };
}
