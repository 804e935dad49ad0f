import { errors } from '../platform/errors.js';
import { containsSql, indexPatterns, type IndexedText } from '../platform/http/common-words.js';
import { likePattern } from '../platform/http/list.js';
import { DEVICE_SEARCH_TEXT } from './virtual-device.entity.js';

/**
 * The device filter syntax (docs/virtual-devices.md), shared by the list query string and the
 * `filter` object of bulk operations:
 *   filter[title]=abc         title contains "abc" (case-insensitive)
 *   filter[tag]=a             has tag "a"
 *   filter[kv.room]=12        keyValueData.room is "12" or the number 12 (12.0 too)
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
  return filterSql(alias, conditions, 'key_value_data').map((part, i) => {
    const c = conditions[i]!;
    if (c.field !== 'title' || c.not) return part;
    // The title is part of the search text, so a title that contains the value makes the search
    // text contain it (and each of its words): a condition the search's trigram index answers (the
    // title has none of its own), checked exactly by the title condition after it.
    const { patterns } = indexPatterns('virtual_devices', c.value);
    return {
      sql: [...patterns.map(() => `${DEVICE_SEARCH_TEXT(alias)} ILIKE ?`), part.sql].join(' AND '),
      params: [...patterns, ...part.params],
    };
  });
}

/** A device's health as shown: no packet yet means `Unknown` (spec, States and transitions). */
export const HEALTH_STATE_SQL = (alias: string): string =>
  `(CASE WHEN ${alias}.last_seen IS NULL THEN 'Unknown' ELSE ${alias}.health_state END)`;

/**
 * HEALTH_STATE_SQL equal to `state`, written so that the index `(account_id, health_state, id)`
 * answers it: the stored state, and for `Unknown` also every device without a packet.
 */
export function healthStateIsSql(alias: string, state: string): { sql: string; params: unknown[] } {
  return state === 'Unknown'
    ? { sql: `${alias}.health_state = ? OR ${alias}.last_seen IS NULL`, params: [state] }
    : { sql: `${alias}.health_state = ? AND ${alias}.last_seen IS NOT NULL`, params: [state] };
}

/**
 * The list's free-text search (`searchItems`): a device matches when its title, `device_id`, EUI,
 * external id or reference id contains the text, ignoring case, so whatever identifier an operator
 * holds finds it. One expression over all five, as the trigram index holds it; the separator between
 * them is dropped from the text, so a match never spans two fields.
 */
export function deviceSearchSql(alias: string, search: string): { sql: string; params: unknown[] } {
  return containsSql(deviceSearchText(alias), search.replaceAll('\u001f', ''));
}

/** The devices' search text as its trigram index holds it, on alias `alias`. */
export const deviceSearchText = (alias: string): IndexedText => ({
  table: 'virtual_devices',
  alias,
  expression: DEVICE_SEARCH_TEXT(alias),
});

/**
 * The texts of a device list whose common words are worth knowing before its SQL is built
 * (common-words.ts): the search and the title filters.
 */
export const deviceSearchTexts = (conditions: DeviceCondition[], search?: string): string[] => [
  ...conditions.filter((c) => c.field === 'title' && !c.not).map((c) => c.value),
  ...(search ? [search.replaceAll('\u001f', '')] : []),
];

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
        return keyValueSql(`${alias}.${keyValueColumn}`, c.key!, c.value, c.not);
    }
  });
}

/**
 * `filter[kv.<key>]=v` on the JSON column `column`: the key holds v as text, or the number or
 * boolean v spells (12 matches "12", 12 and 12.0). Written as JSON containment, which the column's
 * GIN index answers and the planner estimates from the column's statistics. `[not]` is the
 * negation (a row without the key matches it). A value an object or array could read as (`[…`,
 * `{…`) is compared with the key's JSON text instead.
 */
function keyValueSql(column: string, key: string, value: string, not: boolean) {
  const candidates = jsonCandidates(key, value);
  if (!candidates)
    return { sql: `(${column} ->> ?) ${not ? 'IS DISTINCT FROM' : '='} ?`, params: [key, value] };
  const contains = candidates.map(() => `${column} @> ?::jsonb`).join(' OR ');
  return { sql: not ? `NOT (${contains})` : contains, params: candidates };
}

const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * The JSON documents `{key: v}` for the JSON values v that `value` stands for: the string, and the
 * number or boolean it spells (a number written as given, so no rounding through a double). Null
 * when an object or array could read as `value`, or a NUL makes it no JSON text.
 */
function jsonCandidates(key: string, value: string): string[] | null {
  if (/^\s*[[{]/.test(value) || value.includes('\u0000') || key.includes('\u0000')) return null;
  const document = (json: string) => `{${JSON.stringify(key)}:${json}}`;
  const asText = document(JSON.stringify(value));
  if (value === 'true' || value === 'false' || JSON_NUMBER.test(value)) return [asText, document(value)];
  return [asText];
}
