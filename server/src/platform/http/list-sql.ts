import { keepNewest } from '../keep-newest.js';
import { ANCHORED_FROM, nearestAnchor } from './list-anchors.js';
import { afterSql, encodeCursor, keysetOrder } from './list-cursor.js';
import type { ListParams, ListResultMeta } from './list.js';

/**
 * The SQL side of the large lists (devices, twins), built so that a page costs about the same at
 * 2,000 rows as at a million (docs/adr/0121-lists-at-scale.md):
 * - the order is one an index `(account_id, <column>, id)` serves in both directions;
 * - the total of a whole account is exact at any size, kept per account by triggers (list_row_counts,
 *   ADR 0136); a filtered list's is exact up to COUNT_CAP and estimated beyond it (said so in
 *   `meta.totalEstimated`);
 * - a cursor (`after`, from `meta.nextCursor`) continues from the last row seen (keyset), so a deep
 *   page costs what the first does, while page numbers keep working next to it; a page by number
 *   past the middle of a whole account is read from its end.
 */

/** Rows of a filtered list counted exactly; a larger total is the planner's estimate. */
export const COUNT_CAP = 10_000;

export type Execute = <T>(sql: string, params: unknown[]) => Promise<T>;

export interface SortColumn {
  /** The SQL expression (on the list's table alias), as the index spells it. */
  sql: string;
  /** A cursor may continue after it: the column is NOT NULL and indexed `(account_id, sql, id)`. */
  keyset?: boolean;
  /**
   * Ordered by these expressions instead of `sql` (each in the requested direction), with `join`
   * added to the page's id query: an order an index of another table serves (devices' last seen).
   */
  order?: { by: string[]; join: string };
}

/**
 * ORDER BY for the requested fields plus the id as tie-breaker. NULL sorts as the smallest value
 * (first ascending, last descending) and the id follows the first field's direction: then a plain
 * ascending index answers the order forwards and backwards, with no sort of the whole account.
 */
export function orderSql(
  params: Pick<ListParams, 'orderBy'>,
  columns: Record<string, SortColumn>,
  idSql: string,
): string {
  return orderByList(orderTerms(params, columns), params, idSql);
}

/** The expressions the requested fields order by (a column's `order.by`, else its `sql`), each with its direction. */
function orderTerms(params: Pick<ListParams, 'orderBy'>, columns: Record<string, SortColumn>) {
  return params.orderBy.flatMap((o) =>
    (columns[o.field]!.order?.by ?? [columns[o.field]!.sql]).map((sql) => ({ sql, direction: o.direction })),
  );
}

/** `terms` with their NULLS placement, then the id tie-breaker in the first field's direction. */
function orderByList(
  terms: Array<{ sql: string; direction: 'asc' | 'desc' }>,
  params: Pick<ListParams, 'orderBy'>,
  idSql: string,
): string {
  const parts = terms.map((t) => `${t.sql} ${t.direction} nulls ${t.direction === 'asc' ? 'first' : 'last'}`);
  return [...parts, `${idSql} ${params.orderBy[0]?.direction ?? 'asc'}`].join(', ');
}

/** The planner's row estimate of `fromWhere` (a `FROM … WHERE …` text). */
async function plannerEstimate(execute: Execute, fromWhere: string, params: unknown[]): Promise<number> {
  const plan = await execute<Array<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>>(
    `EXPLAIN (FORMAT JSON) SELECT 1 ${fromWhere}`,
    params,
  );
  return Math.round(plan[0]?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? 0);
}

/**
 * The planner's estimate of a filter as the choice between the two ways of paging it (keysetPage)
 * needs it (and, when more than COUNT_CAP match, as the estimated total): kept for a few seconds per
 * statement and values, so paging or refreshing a filtered list does not plan the filter twice per
 * request. The rows and an exact count do not depend on it; the statistics behind it change only
 * when the table is analysed, minutes apart.
 */
const STRATEGY_ESTIMATE_MS = 10_000;
const STRATEGY_ESTIMATES_KEPT = 500;
const strategyEstimates = new Map<string, { rows: number; at: number }>();

/** A filter's statement and values as one key of the memories below. */
const filterKey = (fromWhere: string, params: unknown[]) => `${fromWhere}\u0000${JSON.stringify(params)}`;

async function strategyEstimate(execute: Execute, fromWhere: string, params: unknown[]): Promise<number> {
  const key = filterKey(fromWhere, params);
  const now = performance.now();
  const kept = strategyEstimates.get(key);
  if (kept && now - kept.at < STRATEGY_ESTIMATE_MS) return kept.rows;
  const rows = await plannerEstimate(execute, fromWhere, params);
  keepNewest(strategyEstimates, key, { rows, at: now }, STRATEGY_ESTIMATES_KEPT);
  return rows;
}

/**
 * Filters found to match more than COUNT_CAP rows, when: for a few seconds such a filter's total is
 * its estimate without counting again. Counting the first COUNT_CAP + 1 matches of a sparse filter
 * (a tag on 1% of a million devices: one match per heap page) costs ten times the page, and its
 * result only ever said "more than the cap": the total shown is the estimate either way
 * (`totalEstimated`). Paging or refreshing such a list then costs its page. A total within the cap
 * is counted on every request (exact).
 */
const PAST_CAP_MS = 10_000;
const PAST_CAP_KEPT = 500;
/**
 * What counting found of a filter, and when: past the cap, or within it although the planner
 * expected more. The planner's estimate of a rare search text comes from its statistics' sample
 * and can land past the cap (stale statistics do the same): such a filter would then page through
 * the order index, reading up to a hundred thousand devices for 50 matches (a run at a million
 * showed 32 ms instead of 4, ADR 0138). Found within the cap once, it is found, counted and paged
 * in one statement for the next few seconds.
 */
const counted = new Map<string, { past: boolean; at: number }>();
const countedAs = (key: string, past: boolean) => {
  const found = counted.get(key);
  return found !== undefined && found.past === past && performance.now() - found.at < PAST_CAP_MS;
};
const knownPastCap = (key: string) => countedAs(key, true);
const knownWithinCap = (key: string) => countedAs(key, false);
const remember = (key: string, past: boolean) =>
  keepNewest(counted, key, { past, at: performance.now() }, PAST_CAP_KEPT);
const foundPastCap = (key: string) => remember(key, true);

/**
 * `count(*)` of `fromWhere` (a `FROM … WHERE …` text) up to COUNT_CAP; above it the planner's row
 * estimate, never less than the rows known to exist. Counting a million rows exactly on every page
 * costs more than the page itself.
 */
export async function cappedCount(
  execute: Execute,
  fromWhere: string,
  params: unknown[],
  options: { estimate?: number } = {},
): Promise<{ total: number; estimated: boolean }> {
  const estimated = async () => ({
    total: Math.max(COUNT_CAP + 1, options.estimate ?? (await strategyEstimate(execute, fromWhere, params))),
    estimated: true,
  });
  const key = filterKey(fromWhere, params);
  if (knownPastCap(key)) return estimated();
  // A filter's estimate (`options.estimate`) is only a guess: it is counted all the same.
  const rows = await execute<Array<{ n: string }>>(
    `SELECT count(*) AS n FROM (SELECT 1 ${fromWhere} LIMIT ${COUNT_CAP + 1}) capped`,
    params,
  );
  const exact = Number(rows[0]?.n ?? 0);
  if (exact <= COUNT_CAP) {
    remember(key, false);
    return { total: exact, estimated: false };
  }
  foundPastCap(key);
  return estimated();
}

/** A large list: its table and alias, orderable columns, filter and the row columns to select. */
interface ListSpec {
  table: string;
  alias: string;
  columns: Record<string, SortColumn>;
  where: { sql: string; params: unknown[] };
  select?: string;
}

/**
 * One page of a large list: the rows of `where` in the requested order (after the cursor, or at the
 * page's offset), its capped total and the reply's `totalEstimated` / `nextCursor`. The page's ids
 * come from the order index alone (an index-only scan even deep into the list); `select` (columns
 * on `alias`) then reads their rows by id: selecting whole rows in the ordered scan made a deep page
 * sort the account.
 */
export async function keysetPage<Row extends { id: string }>(
  execute: Execute,
  params: ListParams,
  list: ListSpec & {
    after: string | undefined;
    /**
     * `where` selects exactly this account's rows of `table` (no filter, no scope): the total is
     * the count kept per account (list_row_counts), exact at any size.
     */
    wholeAccount?: string;
  },
): Promise<{ rows: Row[]; total: number; more: Pick<ListResultMeta, 'totalEstimated' | 'nextCursor'> }> {
  const { table, alias: a, columns, where, after } = list;
  const keyset = after ? afterSql(params, columns, `${a}.id`, after) : null;
  const keyText = keysetOrder(params, columns) ? `${columns[params.orderBy[0]!.field]!.sql}::text` : 'NULL';
  const joins = [...new Set(params.orderBy.map((o) => columns[o.field]!.order?.join ?? ''))].join(' ');
  const fromWhere = `FROM ${table} ${a} WHERE ${where.sql}`;
  // A filtered list the planner expects within the cap (or counted within it moments ago) is found,
  // counted and paged in one statement. Expected above it (or found above it), it pages through the
  // order index: materialising the cap's worth of matches to learn that there are more cost more
  // than counting them.
  let counting: Promise<{ total: number; estimated: boolean }> | undefined;
  const account = list.wholeAccount ? accountRows(execute, table, list.wholeAccount) : undefined;
  if (account) {
    counting = account.then(({ n }) => ({ total: n, estimated: false }));
  } else if (!keyset) {
    const expected = await strategyEstimate(execute, fromWhere, where.params);
    const key = filterKey(fromWhere, where.params);
    if ((expected <= COUNT_CAP || knownWithinCap(key)) && !knownPastCap(key)) {
      const small = await smallListPage<Row>(execute, params, { ...list, keyText, joins });
      if (small) return small;
      // Expected within the cap, found past it: the next pages go the order index's way at once.
      foundPastCap(key);
      counting = Promise.resolve({ total: Math.max(COUNT_CAP + 1, expected), estimated: true });
    } else {
      counting = cappedCount(execute, fromWhere, where.params, { estimate: expected });
    }
  }
  // A page by number deep into a whole account: from the nearer end, then from the nearest anchor.
  const window =
    account && !keyset && params.offset >= COUNT_CAP
      ? await deepWindow(execute, params, { ...list, accountId: list.wholeAccount!, account })
      : { offset: keyset ? 0 : params.offset, limit: params.pageSize, reversed: false, from: keyset };
  const order = window.reversed ? reversedOrder(params) : params;
  const from = window.from;
  const pageWhere = from ? `${where.sql} AND ${from.sql}` : where.sql;
  const pageParams = from ? [...where.params, ...from.params] : where.params;
  const ids = `SELECT ${a}.id, ${keyText} AS k FROM ${table} ${a} ${joins} WHERE ${pageWhere}
                ORDER BY ${orderSql(order, columns, `${a}.id`)} LIMIT ? OFFSET ?`;
  const sql = list.select
    ? `SELECT ${list.select}, p.k
         FROM (SELECT s.*, row_number() OVER () AS n FROM (${ids}) s) p
         JOIN ${table} ${a} ON ${a}.id = p.id
        ORDER BY p.n`
    : ids;
  const [count, rows] = await Promise.all([
    counting ?? cappedCount(execute, fromWhere, where.params),
    execute<Array<Row & { k: string | null }>>(sql, [...pageParams, window.limit, window.offset]),
  ]);
  return pageResult(window.reversed ? rows.reverse() : rows, count, params);
}

/** The rows of `table` in `accountId` and the changes of their order, as list_row_counts keeps them. */
async function accountRows(
  execute: Execute,
  table: string,
  accountId: string,
): Promise<{ n: number; changes: string }> {
  const rows = await execute<Array<{ n: string; changes: string }>>(
    'SELECT n, changes::text AS changes FROM list_row_counts WHERE table_name = ? AND account_id = ?',
    [table, accountId],
  );
  return { n: Number(rows[0]?.n ?? 0), changes: rows[0]?.changes ?? '' };
}

/**
 * Where a deep page by number of a whole account starts: past the middle from the end (reversed),
 * and in a cursor order at least ANCHORED_FROM in, after the nearest anchor (list-anchors.ts).
 */
async function deepWindow(
  execute: Execute,
  params: ListParams,
  list: ListSpec & { accountId: string; account: Promise<{ n: number; changes: string }> },
): Promise<{
  offset: number;
  limit: number;
  reversed: boolean;
  from: { sql: string; params: unknown[] } | null;
}> {
  const { n, changes } = await list.account;
  const window = { ...fromNearerEnd(params, n), from: null };
  if (window.offset < ANCHORED_FROM || !keysetOrder(params, list.columns)) return window;
  const order = window.reversed ? reversedOrder(params) : params;
  const idSql = `${list.alias}.id`;
  const anchor = await nearestAnchor(
    execute,
    { ...list, order, column: list.columns[params.orderBy[0]!.field]!, changes },
    window.offset,
    orderSql(order, list.columns, idSql),
  );
  if (!anchor) return window;
  return {
    ...window,
    offset: window.offset - anchor.position - 1,
    from: afterSql(order, list.columns, idSql, encodeCursor(anchor.key, anchor.id)),
  };
}

/**
 * A page by number of a list of `total` rows, read from the nearer end: past the middle, the rows
 * [offset, offset + pageSize) are the same rows counted from the end in the reversed order (then
 * reversed back), and the order index walks total - offset entries instead of offset. Page 1,990 of
 * 2,000 costs what page 10 does; the middle stays the dearest.
 */
function fromNearerEnd(
  params: ListParams,
  total: number,
): { offset: number; limit: number; reversed: boolean } {
  const end = Math.min(total, params.offset + params.pageSize);
  if (end <= params.offset || params.offset < total - end)
    return { offset: params.offset, limit: params.pageSize, reversed: false };
  return { offset: total - end, limit: end - params.offset, reversed: true };
}

/** The same order backwards: every field's direction flipped (NULLs and the id follow, see orderSql). */
const reversedOrder = (params: ListParams): Pick<ListParams, 'orderBy'> => ({
  orderBy: params.orderBy.map((o) => ({ field: o.field, direction: o.direction === 'asc' ? 'desc' : 'asc' })),
});

function pageResult<Row extends { id: string }>(
  rows: Array<Row & { k: string | null }>,
  count: { total: number; estimated: boolean },
  params: ListParams,
): { rows: Row[]; total: number; more: Pick<ListResultMeta, 'totalEstimated' | 'nextCursor'> } {
  const last = rows.at(-1);
  return {
    rows,
    total: count.total,
    more: {
      ...(count.estimated ? { totalEstimated: true } : {}),
      ...(last?.k != null && rows.length === params.pageSize
        ? { nextCursor: encodeCursor(last.k, last.id) }
        : {}),
    },
  };
}

/**
 * A filtered list (a search, a tag, a connector) usually matches few rows: then one statement finds
 * them once (up to COUNT_CAP + 1, through whatever index the filter uses), counts them and sorts
 * the page out of them, instead of running the filter's scan twice (count, page). Null when more
 * than COUNT_CAP match: the caller pages through the order index and estimates the total.
 */
async function smallListPage<Row extends { id: string }>(
  execute: Execute,
  params: ListParams,
  list: ListSpec & {
    keyText: string;
    joins: string;
  },
): Promise<ReturnType<typeof pageResult<Row>> | null> {
  const { table, alias: a, columns, where } = list;
  const order = orderTerms(params, columns);
  const keys = order.map((o, i) => `${o.sql} AS o${i}`);
  // The same order on the matches' own columns o0, o1, … (as `m`, then as `p`).
  const orderBy = (alias: string) =>
    orderByList(
      order.map((o, i) => ({ sql: `${alias}.o${i}`, direction: o.direction })),
      params,
      `${alias}.id`,
    );
  const matches = `SELECT ${a}.id, ${list.keyText} AS k${keys.map((k) => `, ${k}`).join('')}
                     FROM ${table} ${a} ${list.joins} WHERE ${where.sql} LIMIT ${COUNT_CAP + 1}`;
  // A top-N sort of the matches for the page (a full sort of them cost more than the second scan
  // it saves), then the page's rows in that order again.
  const page = `SELECT * FROM m ORDER BY ${orderBy('m')} LIMIT ? OFFSET ?`;
  const rowsOf = list.select ? `(p JOIN ${table} ${a} ON ${a}.id = p.id)` : 'p';
  const sql = `WITH m AS MATERIALIZED (${matches}), p AS (${page})
    SELECT (SELECT count(*) FROM m) AS total__, ${list.select ? `${list.select}, ` : 'p.id, '}p.k
      FROM (SELECT 1) one LEFT JOIN ${rowsOf} ON true
     ORDER BY ${orderBy('p')}`;
  const rows = await execute<Array<Row & { k: string | null; total__: string }>>(sql, [
    ...where.params,
    params.pageSize,
    params.offset,
  ]);
  const total = Number(rows[0]?.total__ ?? 0);
  if (total > COUNT_CAP) return null;
  const found = rows
    .filter((row) => row.id != null)
    .map(({ total__: _total, ...row }) => row as Row & { k: string | null });
  return pageResult(found, { total, estimated: false }, params);
}
