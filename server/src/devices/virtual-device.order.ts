import type { SortColumn } from '../platform/http/list-sql.js';

/** The device list's sortable fields (API names) and the SQL each orders by, on alias `d`. */
export const VIRTUAL_DEVICE_SORTABLE = [
  'title',
  'device_id',
  'createdAt',
  'updatedAt',
  'lastSeen',
  'healthState',
  'operationalStatus',
] as const;
export const SORT_COLUMNS: Record<string, SortColumn> = {
  // Text sorts ignore case, as the search does. `keyset`: NOT NULL and indexed (account_id, column, id).
  title: { sql: 'lower(d.title)', keyset: true },
  device_id: { sql: 'lower(d.device_id)', keyset: true },
  createdAt: { sql: 'd.created_at', keyset: true },
  // The last-seen order comes from `device_seen_order` (the second, indexed; ADR 0133), then the
  // exact time: the device row's own column stays unindexed, so its update per packet batch is HOT.
  lastSeen: {
    sql: 'd.last_seen',
    order: {
      by: ['so.seen_second', 'd.last_seen'],
      join: 'JOIN device_seen_order so ON so.device_id = d.id AND so.account_id = d.account_id',
    },
  },
  // Indexed (account_id, column, id) as well, but no cursor: they change with health checks and
  // edits, which the anchors of deep pages do not follow (list-anchors.ts). The ingest path never
  // writes them, so its last-seen updates stay HOT.
  updatedAt: { sql: 'd.updated_at' },
  healthState: { sql: 'd.health_state' },
  operationalStatus: { sql: 'd.operational_status' },
};
