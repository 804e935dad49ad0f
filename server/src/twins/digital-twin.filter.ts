import type { DeviceCondition } from '../devices/virtual-device.filter.js';
import { likePattern } from '../platform/http/list.js';

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
  return conditions.map((c) => {
    switch (c.field) {
      case 'title':
        return { sql: `${alias}.title ${c.not ? 'NOT ILIKE' : 'ILIKE'} ?`, params: [likePattern(c.value)] };
      case 'tag':
        return { sql: `${c.not ? 'NOT ' : ''}(? = ANY(${alias}.tags))`, params: [c.value] };
      case 'kv':
        return {
          sql: `(${alias}.custom_properties ->> ?) ${c.not ? 'IS DISTINCT FROM' : '='} ?`,
          params: [c.key, c.value],
        };
    }
  });
}
