import { keepNewest } from '../keep-newest.js';
import type { ListParams } from './list.js';
import type { Execute, SortColumn } from './list-sql.js';

/**
 * Anchors of a whole account's list in one cursor order: the sort key and id of every 1,000th row,
 * remembered with the account's `list_row_counts.changes` they were read at (ADR 0136). A page by
 * number deep into the list starts from the nearest anchor before it (a keyset condition) and walks
 * at most 1,000 entries, instead of every entry before the offset: the middle of a million devices
 * walked 500,000.
 *
 * The anchors hold while `changes` stays: it moves with every insert, delete, move between accounts and
 * change of a column the lists order by with a cursor (the triggers of list_row_counts). They are read
 * in one statement with the `changes` they belong to, so they are exact for that value. A list whose
 * rows change more often than every 10 s is walked instead of re-anchored on every request.
 */
const SPACING = 1_000;
/** Offsets below this are walked: 20,000 index entries cost about 2 ms. */
export const ANCHORED_FROM = 20_000;
const REBUILD_AFTER_MS = 10_000;
const LISTS_KEPT = 50;

interface Anchors {
  changes: string;
  /** anchors[i]: the row at position (i + 1) * SPACING - 1 of the order (0-based). */
  rows: Array<{ key: string; id: string }>;
  at: number;
}

const kept = new Map<string, Anchors>();

export interface AnchoredList {
  table: string;
  alias: string;
  /** The list's one keyset column and direction, as the page reads it (maybe reversed). */
  order: Pick<ListParams, 'orderBy'>;
  column: SortColumn;
  /** Exactly the account's rows (keysetPage's `wholeAccount`). */
  where: { sql: string; params: unknown[] };
  accountId: string;
  /** The account's `list_row_counts.changes` as just read. */
  changes: string;
}

/** The anchor at or before `offset`, with its position; null when there is none to use. */
export async function nearestAnchor(
  execute: Execute,
  list: AnchoredList,
  offset: number,
  orderSql: string,
): Promise<{ position: number; key: string; id: string } | null> {
  const index = Math.floor((offset + 1) / SPACING) - 1;
  if (index < 0) return null;
  const name = JSON.stringify([list.table, list.where.sql, list.where.params, list.order.orderBy]);
  let anchors = kept.get(name);
  if (anchors?.changes !== list.changes) {
    if (anchors && performance.now() - anchors.at < REBUILD_AFTER_MS) return null;
    anchors = await readAnchors(execute, list, orderSql);
    keepNewest(kept, name, anchors, LISTS_KEPT);
  }
  // Read at another value of `changes` (a change committed in between): not for this request.
  if (anchors.changes !== list.changes || anchors.rows.length === 0) return null;
  const at = Math.min(index, anchors.rows.length - 1);
  return { position: (at + 1) * SPACING - 1, ...anchors.rows[at]! };
}

async function readAnchors(execute: Execute, list: AnchoredList, orderSql: string): Promise<Anchors> {
  const a = list.alias;
  const rows = await execute<Array<{ changes: string | null; k: string | null; id: string | null }>>(
    `WITH c AS (SELECT changes FROM list_row_counts WHERE table_name = ? AND account_id = ?),
          s AS (SELECT x.k, x.id, x.r FROM (
                  SELECT ${list.column.sql}::text AS k, ${a}.id, row_number() OVER (ORDER BY ${orderSql}) AS r
                    FROM ${list.table} ${a} WHERE ${list.where.sql}) x
                 WHERE x.r % ${SPACING} = 0)
     SELECT (SELECT changes FROM c)::text AS changes, s.k, s.id
       FROM (SELECT 1) one LEFT JOIN s ON true ORDER BY s.r`,
    [list.table, list.accountId, ...list.where.params],
  );
  return {
    changes: rows[0]?.changes ?? '',
    rows: rows.filter((r) => r.k !== null && r.id !== null).map((r) => ({ key: r.k!, id: r.id! })),
    at: performance.now(),
  };
}
