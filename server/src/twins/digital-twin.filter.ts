import { filterSql, type DeviceCondition } from '../devices/virtual-device.filter.js';
import { containsSql, type IndexedText } from '../platform/http/common-words.js';
import type { TwinStatus } from './digital-twin.entity.js';

/**
 * Twins take the device filter syntax unchanged (`parseDeviceFilter`, docs/virtual-devices.md), so a
 * client filters both lists the same way; on twins `filter[kv.<key>]` reads the custom properties:
 *   filter[title]=abc         title contains "abc" (case-insensitive)
 *   filter[tag]=a             has tag "a"
 *   filter[kv.floor]=2        customProperties.floor equals "2"
 *   filter[<any>][not]=…      the negation of the same condition
 */
export function twinFilterSql(
  alias: string,
  conditions: DeviceCondition[],
): Array<{ sql: string; params: unknown[] }> {
  return filterSql(alias, conditions, 'custom_properties').map((part, i) => {
    const c = conditions[i]!;
    return c.field === 'title' && !c.not ? containsSql(twinTitle(alias), c.value) : part;
  });
}

/** The twins' title as its trigram index holds it, on alias `alias`. */
export const twinTitle = (alias: string): IndexedText => ({
  table: 'digital_twins',
  alias,
  expression: `${alias}.title`,
});

export const TWIN_STATUSES: readonly TwinStatus[] = ['active', 'inactive'];
export const STATUS_FILTER = 'filter[status]';

/**
 * `filter[status]=active` (repeated: any of them) is the twins' own filter; it is taken out before
 * the shared syntax reads the rest, which would refuse it as unknown. The route's schema has
 * already refused any other value.
 */
export function splitStatusFilter(params: Record<string, unknown>): {
  statuses: TwinStatus[];
  rest: Record<string, unknown>;
} {
  const { [STATUS_FILTER]: raw, ...rest } = params;
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const statuses = TWIN_STATUSES.filter((status) => values.includes(status));
  return { statuses, rest };
}

/** Parameterised SQL for the status filter (knex expands the array binding into `IN`'s list). */
export function statusFilterSql(
  alias: string,
  statuses: TwinStatus[],
): { sql: string; params: unknown[] } | null {
  return statuses.length > 0 ? { sql: `${alias}.status IN (?)`, params: [statuses] } : null;
}
