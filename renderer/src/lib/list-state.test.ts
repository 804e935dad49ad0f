import { afterEach, describe, expect, it, vi } from 'vitest';
import { ListLoader, SEARCH_DELAY_MS, type ListFields, type ListQuery, type ListReply } from './list-loader';

type Reply = ListReply<{ id: string }>;

/** A request the test answers by hand, so replies can arrive out of order. */
interface Pending {
  query: ListQuery;
  resolve: (reply: Reply) => void;
  reject: (failure: unknown) => void;
}

function fieldsOf(overrides: Partial<ListFields<Reply>> = {}): ListFields<Reply> {
  return {
    rows: [],
    total: 0,
    totalEstimated: false,
    loading: true,
    error: null,
    page: 1,
    pageSize: 25,
    sort: 'title',
    search: '',
    ...overrides,
  };
}

function harness(
  fields = fieldsOf(),
  options: { clearError?: 'start' | 'success' | 'never'; watch?: () => unknown } = {},
) {
  const pending: Pending[] = [];
  const loaded: Reply[] = [];
  const loader = new ListLoader<Reply>(fields, {
    ...options,
    load: (query) => new Promise<Reply>((resolve, reject) => pending.push({ query, resolve, reject })),
    onLoaded: (reply) => loaded.push(reply),
  });
  return { fields, loader, pending, loaded };
}

const reply = (...ids: string[]): Reply => ({ data: ids.map((id) => ({ id })), meta: { total: ids.length } });

afterEach(() => {
  vi.useRealTimers();
});

describe('ListLoader', () => {
  it('asks with paging, sort and the trimmed search, and shows the reply', async () => {
    const { fields, loader, pending, loaded } = harness(
      fieldsOf({ page: 2, pageSize: 10, sort: '-updatedAt', search: '  pump ' }),
    );
    const done = loader.reload();
    expect(fields.loading).toBe(true);
    expect(pending[0]?.query).toEqual({ page: 2, pageSize: 10, sort: '-updatedAt', searchItems: 'pump' });
    pending[0]?.resolve(reply('a', 'b'));
    await done;
    expect(fields).toMatchObject({ rows: [{ id: 'a' }, { id: 'b' }], total: 2, loading: false, error: null });
    expect(loaded).toHaveLength(1);
    expect(loader.query().searchItems).toBe('pump');
    fields.search = '   ';
    expect(loader.query().searchItems).toBeUndefined();
  });

  it('drops a stale reply that arrives after a newer one', async () => {
    const { fields, loader, pending, loaded } = harness();
    const first = loader.reload();
    const second = loader.reload();
    pending[1]?.resolve(reply('new'));
    await second;
    pending[0]?.resolve(reply('old', 'older'));
    await first;
    expect(fields.rows).toEqual([{ id: 'new' }]);
    expect(fields.total).toBe(1);
    expect(loaded).toHaveLength(1);
  });

  it('keeps loading and ignores a stale failure while a newer request runs', async () => {
    const { fields, loader, pending } = harness();
    const first = loader.reload();
    const second = loader.reload();
    pending[0]?.reject(new Error('old failure'));
    await first;
    expect(fields.error).toBeNull();
    expect(fields.loading).toBe(true);
    pending[1]?.reject(new Error('new failure'));
    await second;
    expect((fields.error as Error).message).toBe('new failure');
    expect(fields.loading).toBe(false);
  });

  it('tells onLoaded when a newer request has started', async () => {
    const fields = fieldsOf();
    const checks: (() => boolean)[] = [];
    const pending: ((reply: Reply) => void)[] = [];
    const loader = new ListLoader<Reply>(fields, {
      load: () => new Promise<Reply>((resolve) => pending.push(resolve)),
      onLoaded: (_reply, isCurrent) => checks.push(isCurrent),
    });
    const done = loader.reload();
    pending[0]?.(reply('a'));
    await done;
    expect(checks[0]?.()).toBe(true);
    void loader.reload();
    expect(checks[0]?.()).toBe(false);
  });

  it('clears the error as a load starts, once it succeeds, or never, as chosen', async () => {
    for (const [clearError, whileLoading, afterSuccess] of [
      ['start', null, null],
      ['success', 'shown', null],
      ['never', 'shown', 'shown'],
    ] as const) {
      const { fields, loader, pending } = harness(fieldsOf({ error: 'shown' }), { clearError });
      const done = loader.reload();
      expect(fields.error, clearError).toBe(whileLoading);
      pending[0]?.resolve(reply('a'));
      await done;
      expect(fields.error, clearError).toBe(afterSuccess);
    }
  });

  it('searches from page 1: on another page by moving there, on page 1 by reloading', async () => {
    const onOtherPage = harness(fieldsOf({ page: 3 }));
    onOtherPage.loader.searchNow();
    expect(onOtherPage.fields.page).toBe(1);
    // The page change is the owner's cue to reload (ListState watches the page).
    expect(onOtherPage.pending).toHaveLength(0);

    const onFirstPage = harness(fieldsOf({ page: 1, search: 'x' }));
    onFirstPage.loader.searchNow();
    expect(onFirstPage.pending.map((p) => p.query.searchItems)).toEqual(['x']);
  });

  it('waits for typing to pause before it searches', () => {
    vi.useFakeTimers();
    const { fields, loader, pending } = harness(fieldsOf({ page: 1 }));
    fields.search = 'p';
    loader.onSearchInput();
    vi.advanceTimersByTime(SEARCH_DELAY_MS - 1);
    fields.search = 'pu';
    loader.onSearchInput();
    vi.advanceTimersByTime(SEARCH_DELAY_MS - 1);
    expect(pending).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(pending.map((p) => p.query.searchItems)).toEqual(['pu']);
  });

  it('drops a pending search when searched at once or disposed', () => {
    vi.useFakeTimers();
    const { loader, pending } = harness(fieldsOf({ page: 1 }));
    loader.onSearchInput();
    loader.searchNow();
    vi.advanceTimersByTime(SEARCH_DELAY_MS * 2);
    expect(pending).toHaveLength(1);
    loader.onSearchInput();
    loader.dispose();
    vi.advanceTimersByTime(SEARCH_DELAY_MS * 2);
    expect(pending).toHaveLength(1);
  });

  describe('cursors', () => {
    const paged = (cursor: string | undefined, ...ids: string[]): Reply => ({
      data: ids.map((id) => ({ id })),
      meta: { total: 1000, ...(cursor ? { nextCursor: cursor } : {}) },
    });
    // Loads the fields' current page and answers it with `answer`.
    async function load(h: ReturnType<typeof harness>, answer: Reply): Promise<ListQuery> {
      const done = h.loader.reload();
      const request = h.pending.at(-1)!;
      request.resolve(answer);
      await done;
      return request.query;
    }

    it('asks for the next and the previous page by the cursors the replies gave', async () => {
      const h = harness(fieldsOf({ page: 1, pageSize: 2 }));
      expect((await load(h, paged('c1', 'a', 'b'))).after).toBeUndefined();
      h.fields.page = 2;
      expect(await load(h, paged('c2', 'c', 'd'))).toMatchObject({ page: 2, after: 'c1' });
      h.fields.page = 3;
      expect(await load(h, paged(undefined, 'e'))).toMatchObject({ page: 3, after: 'c2' });
      h.fields.page = 2;
      expect((await load(h, paged('c2', 'c', 'd'))).after).toBe('c1');
      h.fields.page = 1;
      expect((await load(h, paged('c1', 'a', 'b'))).after).toBeUndefined();
    });

    it('asks by page number for a page it has no cursor to', async () => {
      const h = harness(fieldsOf({ page: 1 }));
      await load(h, paged('c1', 'a'));
      h.fields.page = 5;
      const query = await load(h, paged('c5', 'x'));
      expect(query.page).toBe(5);
      expect(query.after).toBeUndefined();
      h.fields.page = 6;
      expect((await load(h, paged(undefined, 'y'))).after).toBe('c5');
    });

    it('forgets the cursors when sort, page size, search or the page’s filters change', async () => {
      let zone = 'north';
      const h = harness(fieldsOf({ page: 1 }), { watch: () => [zone] });
      const toPage2 = async () => {
        h.fields.page = 1;
        await load(h, paged('c1', 'a'));
        h.fields.page = 2;
      };
      const changes: Array<() => void> = [
        () => (h.fields.sort = '-title'),
        () => (h.fields.pageSize = 50),
        () => (h.fields.search = 'pump'),
        () => (zone = 'south'),
      ];
      for (const change of changes) {
        await toPage2();
        change();
        expect((await load(h, paged(undefined, 'z'))).after).toBeUndefined();
      }
      // Unchanged, the cursor is used.
      await toPage2();
      expect((await load(h, paged(undefined, 'z'))).after).toBe('c1');
    });

    it('keeps the cursor of a reply that was overtaken by a newer request', async () => {
      const h = harness(fieldsOf({ page: 1 }));
      const slow = h.loader.reload();
      h.fields.page = 3;
      const newer = h.loader.reload();
      h.pending[0]!.resolve(paged('c1', 'a'));
      h.pending[1]!.resolve(paged(undefined, 'x'));
      await Promise.all([slow, newer]);
      expect(h.fields.rows).toEqual([{ id: 'x' }]);
      h.fields.page = 2;
      expect((await load(h, paged(undefined, 'b'))).after).toBe('c1');
    });
  });

  it('puts a changed row in place, and asks again when a load that began before the change is on its way', async () => {
    const h = harness(fieldsOf({ page: 1 }));
    const first = h.loader.reload();
    h.pending[0]!.resolve(reply('a', 'b'));
    await first;
    h.loader.replaceRow({ id: 'b', status: 'acknowledged' } as { id: string });
    expect(h.fields.rows).toEqual([{ id: 'a' }, { id: 'b', status: 'acknowledged' }]);
    expect(h.pending).toHaveLength(1);

    // A live reload started; the action's answer comes back before that reload's.
    const stale = h.loader.reload();
    h.loader.replaceRow({ id: 'b', status: 'closed' } as { id: string });
    expect(h.pending).toHaveLength(3);
    h.pending[1]!.resolve({
      data: [{ id: 'a' }, { id: 'b', status: 'acknowledged' } as { id: string }],
      meta: { total: 2 },
    });
    await stale;
    expect(h.fields.rows[1]).toEqual({ id: 'b', status: 'closed' });
    h.pending[2]!.resolve({
      data: [{ id: 'a' }, { id: 'b', status: 'closed' } as { id: string }],
      meta: { total: 2 },
    });
    await Promise.resolve();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(h.fields).toMatchObject({ loading: false, rows: [{ id: 'a' }, { id: 'b', status: 'closed' }] });
  });
});
