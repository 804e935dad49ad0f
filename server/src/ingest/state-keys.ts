/**
 * How one parsed item becomes device states. Nested objects and arrays become states under dotted
 * keys of their leaves: `{battery: {voltage: 3.6}}` → `battery.voltage`, `{readings: [{value: 1}]}`
 * → `readings.0.value`, `{samples: [4, 5]}` → `samples.0`, `samples.1`. A key a target variable of
 * type `object` names keeps its whole value; an empty object or array is kept as the value of its
 * key, so a list that became empty shows as empty. Items of a top-level array are separate updates
 * (the 50-item rule), never numbered keys.
 */

export const RAW_STATE = '_raw';
export const PARSED_STATE = '_parsed';
/** States an item yields at most; beyond it the rest are ignored (they stay in `_parsed`). */
export const MAX_KEYS_PER_ITEM = 200;
export const MAX_KEY_LENGTH = 200;
/** Nesting levels turned into dotted keys; anything deeper is kept as the value at that level. */
export const MAX_KEY_DEPTH = 8;
const RESERVED = new Set([RAW_STATE, PARSED_STATE]);

const isContainer = (value: unknown): value is Record<string, unknown> | unknown[] =>
  typeof value === 'object' && value !== null;

/** The states of one item: leaf key → JSON value, in the item's order, at most MAX_KEYS_PER_ITEM. */
export function stateEntries(
  item: Record<string, unknown>,
  keepWhole: ReadonlySet<string> = new Set(),
): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const walk = (value: unknown, path: string, depth: number): boolean => {
    if (out.size >= MAX_KEYS_PER_ITEM) return false;
    const entries = isContainer(value) ? Object.entries(value) : [];
    if (entries.length === 0 || depth >= MAX_KEY_DEPTH || keepWhole.has(path)) {
      if (path.length <= MAX_KEY_LENGTH) out.set(path, value);
      return true;
    }
    for (const [key, child] of entries) {
      if (key === '') continue;
      if (!walk(child, `${path}.${key}`, depth + 1)) return false;
    }
    return true;
  };
  for (const [key, value] of Object.entries(item)) {
    if (RESERVED.has(key) || key === '' || key.length > MAX_KEY_LENGTH) continue;
    if (!walk(value, key, 1)) break;
  }
  return out;
}

/** Target variables of type `object` keep their value whole under their key. */
export const wholeKeys = (targetVariables: ReadonlyArray<{ key: string; type: string }>): Set<string> =>
  new Set(targetVariables.filter((v) => v.type === 'object').map((v) => v.key));
