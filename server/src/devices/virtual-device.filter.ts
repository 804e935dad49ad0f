import { errors } from '../platform/errors.js';
import { likePattern } from '../platform/http/list.js';
import { DEVICE_SEARCH_TEXT } from './virtual-device.entity.js';

/**
 * The device filter syntax (docs/virtual-devices.md), shared by the list query string and the
 * `filter` object of bulk operations:
 *   filter[title]=abc         title contains "abc" (case-insensitive)
 *   filter[tag]=a             has tag "a"
 *   filter[kv.room]=12        keyValueData.room equals "12" (numbers compare by their text)
 *   filter[<any>][not]=…      the negation of the same condition
 * A repeated parameter adds one condition per value; all conditions must hold.
 */
export interface DeviceCondition {
  field: 'title' | 'tag' | 'kv';
  key?: string;
  not: boolean;
  value: string;
}

const PARAM = /^filter\[(title|tag|kv\.([^\]]{1,100}))\](\[not\])?$/;

/** Pattern for the query-string schema, so unknown keys are still refused by validation. */
export const FILTER_PARAM_PATTERN = '^filter\\[(title|tag|kv\\.[^\\]]{1,100})\\](\\[not\\])?$';

export function parseDeviceFilter(params: Record<string, unknown>): DeviceCondition[] {
  const conditions: DeviceCondition[] = [];
  for (const [name, raw] of Object.entries(params)) {
    if (!name.startsWith('filter[')) continue;
    const match = PARAM.exec(name);
    if (!match) {
      throw errors.validation(
        `Unknown filter "${name}"; use filter[title], filter[tag] or filter[kv.<key>]`,
        [{ location: 'querystring', path: `/${name}` }],
      );
    }
    const values = Array.isArray(raw) ? raw : [raw];
    for (const value of values) {
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
        throw errors.validation(`Filter "${name}" needs a text value`, [{ path: `/${name}` }]);
      }
      const field = match[1]!.startsWith('kv.') ? 'kv' : (match[1] as 'title' | 'tag');
      conditions.push({
        field,
        ...(field === 'kv' ? { key: match[2]! } : {}),
        not: match[3] !== undefined,
        value: String(value),
      });
    }
  }
  return conditions;
}

/** Parameterised SQL for the conditions; `alias` is the virtual_devices table alias. */
export function deviceFilterSql(
  alias: string,
  conditions: DeviceCondition[],
): Array<{ sql: string; params: unknown[] }> {
  return filterSql(alias, conditions, 'key_value_data');
}

/** A device's health as shown: no packet yet means `Unknown` (spec, States and transitions). */
export const HEALTH_STATE_SQL = (alias: string): string =>
  `(CASE WHEN ${alias}.last_seen IS NULL THEN 'Unknown' ELSE ${alias}.health_state END)`;

/**
 * The list's free-text search (`searchItems`): a device matches when its title, `device_id`, EUI or
 * external id contains the text, ignoring case, so whatever identifier an operator holds finds it.
 * One expression over all four, as the trigram index holds it; the separator between them is
 * dropped from the text, so a match never spans two fields.
 */
export function deviceSearchSql(alias: string, search: string): { sql: string; params: unknown[] } {
  return {
    sql: `${DEVICE_SEARCH_TEXT(alias)} ILIKE ?`,
    params: [likePattern(search.replaceAll('\u001f', ''))],
  };
}

/**
 * The same conditions on any table with `title` and `tags`; `kv.<key>` reads the JSON column
 * `keyValueColumn` (a fixed identifier chosen by the caller, never user input).
 */
export function filterSql(
  alias: string,
  conditions: DeviceCondition[],
  keyValueColumn: 'key_value_data' | 'custom_properties',
): Array<{ sql: string; params: unknown[] }> {
  return conditions.map((c) => {
    switch (c.field) {
      case 'title':
        return { sql: `${alias}.title ${c.not ? 'NOT ILIKE' : 'ILIKE'} ?`, params: [likePattern(c.value)] };
      case 'tag':
        // Containment, not `= ANY`: the form the GIN index on tags answers.
        return { sql: `${c.not ? 'NOT ' : ''}(${alias}.tags @> ARRAY[?]::text[])`, params: [c.value] };
      case 'kv':
        return {
          sql: `(${alias}.${keyValueColumn} ->> ?) ${c.not ? 'IS DISTINCT FROM' : '='} ?`,
          params: [c.key, c.value],
        };
    }
  });
}
