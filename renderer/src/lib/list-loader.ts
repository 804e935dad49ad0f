/** A list reply of the XAPI: one page of rows and the total over all pages. */
export interface ListReply<Row = unknown> {
  data: Row[];
  meta: { total: number; totalEstimated?: boolean; nextCursor?: string };
}

/** The paging, sorting and search parameters every list route takes. */
export interface ListQuery {
  page: number;
  pageSize: number;
  sort: string;
  searchItems: string | undefined;
  /** The previous page's `meta.nextCursor`: the server continues after its last row (page ignored). */
  after?: string;
}

/** What a list page shows; `ListState` keeps these as runes, a test as a plain object. */
export interface ListFields<R extends ListReply> {
  rows: R['data'];
  total: number;
  /** The server estimated the total (lists over 10,000 rows count no further). */
  totalEstimated: boolean;
  loading: boolean;
  error: unknown;
  page: number;
  pageSize: number;
  sort: string;
  search: string;
}

/**
 * When a load clears the error shown: as it starts (the default), once it succeeded (the old message
 * stays while the list loads), or never (a page that shows an action's error and reloads after it).
 */
export type ClearError = 'start' | 'success' | 'never';

export interface ListLoaderOptions<R extends ListReply> {
  /** Asks the server for one page; the page adds its own filters to `query`. */
  load: (query: ListQuery) => Promise<R>;
  /** After the rows of the latest request landed; `isCurrent` turns false once a newer request starts. */
  onLoaded?: (reply: R, isCurrent: () => boolean) => void;
  clearError?: ClearError;
  /** How long typing in the search box must pause before the list asks again. */
  searchDelayMs?: number;
  /**
   * The page's own filters (account, type, status …): ListState reloads the list when they change,
   * and the cursors kept for one set of filters are not used for another.
   */
  watch?: () => unknown;
}

/** Typing waits this long for a pause before the list asks the server. */
export const SEARCH_DELAY_MS = 250;

/**
 * The loading logic of a paged list, apart from Svelte: only the latest request's reply (or error)
 * lands, so a slow answer to an old query never overwrites a newer one; a search starts at page 1.
 *
 * Pages are numbered for the user, but a page reached from its neighbour asks by cursor: a reply's
 * `meta.nextCursor` is kept as the way to the next page, so walking through a list of a million rows
 * costs each page what the first costs (an offset makes the database walk every row before it).
 * The cursors belong to one sort, page size, search and set of filters; any change forgets them,
 * and a page without a cursor (a jump, a list whose sort gives none) asks by number.
 */
export class ListLoader<R extends ListReply<{ id: string }>> {
  private latest = 0;
  private searchTimer: ReturnType<typeof setTimeout> | undefined;
  /** Page number → the `after` that loads it, for the list as `cursorScope` describes it. */
  private cursors = new Map<number, string>();
  private cursorScope = '';

  constructor(
    private readonly fields: ListFields<R>,
    private readonly options: ListLoaderOptions<R>,
  ) {}

  /** The parameters of the next request; forgets the cursors when the list they belong to changed. */
  query(): ListQuery {
    const { page, pageSize, sort, search } = this.fields;
    const searchItems = search.trim() || undefined;
    const scope = JSON.stringify([sort, pageSize, searchItems ?? null, this.options.watch?.() ?? null]);
    if (scope !== this.cursorScope) {
      this.cursors.clear();
      this.cursorScope = scope;
    }
    const after = page > 1 ? this.cursors.get(page) : undefined;
    return { page, pageSize, sort, searchItems, ...(after ? { after } : {}) };
  }

  async reload(): Promise<void> {
    const mine = ++this.latest;
    const isCurrent = () => mine === this.latest;
    const fields = this.fields;
    const clearError = this.options.clearError ?? 'start';
    fields.loading = true;
    if (clearError === 'start') fields.error = null;
    try {
      const query = this.query();
      const scope = this.cursorScope;
      const reply = await this.options.load(query);
      if (scope === this.cursorScope && reply.meta.nextCursor)
        this.cursors.set(query.page + 1, reply.meta.nextCursor);
      if (!isCurrent()) return;
      fields.rows = reply.data;
      fields.total = reply.meta.total;
      fields.totalEstimated = reply.meta.totalEstimated === true;
      if (clearError === 'success') fields.error = null;
      this.options.onLoaded?.(reply, isCurrent);
    } catch (failure) {
      if (isCurrent()) fields.error = failure;
    } finally {
      if (isCurrent()) fields.loading = false;
    }
  }

  /**
   * Applies the search at once: from page 1. Where the page changes, the owner's page watch reloads;
   * on page 1 already, this reloads itself.
   */
  searchNow(): void {
    clearTimeout(this.searchTimer);
    if (this.fields.page === 1) void this.reload();
    else this.fields.page = 1;
  }

  /** For the search box's input event: searches once typing pauses. */
  onSearchInput(): void {
    clearTimeout(this.searchTimer);
    this.searchTimer = setTimeout(() => this.searchNow(), this.options.searchDelayMs ?? SEARCH_DELAY_MS);
  }

  /**
   * Puts a changed row in place (the server's answer to an action on it). A load still on its way
   * began before the change and would put the old row back when it lands: a new load replaces it.
   */
  replaceRow(updated: R['data'][number]): void {
    this.fields.rows = this.fields.rows.map((row) => (row.id === updated.id ? updated : row));
    if (this.fields.loading) void this.reload();
  }

  /** Drops a pending search (the page is gone). */
  dispose(): void {
    clearTimeout(this.searchTimer);
  }
}
