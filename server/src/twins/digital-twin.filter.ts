import { filterSql, type DeviceCondition } from '../devices/virtual-device.filter.js';

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
  return filterSql(alias, conditions, 'custom_properties');
}
