import { isMetaKey } from './meta-state-types.js';

/**
 * How one parsed item becomes device states. Every top-level key is a state with its value, as it
 * always was (data states, rules and health rules name them). Nested objects and arrays also
 * become states under the dotted keys of their leaves: `{battery: {voltage: 3.6}}` → `battery`
 * and `battery.voltage`, `{readings: [{value: 1}]}` → `readings` and `readings.0.value`,
 * `{samples: [4, 5]}` → `samples`, `samples.0`, `samples.1`. Below a key a target variable of type
 * `object` names, nothing is split. Items of a top-level array are separate updates (the 50-item
 * rule), never numbered keys.
 */

export const RAW_STATE = '_raw';
export const PARSED_STATE = '_parsed';
/** States an item yields at most; beyond it the rest are ignored (they stay in `_parsed`). */
export const MAX_KEYS_PER_ITEM = 200;
export const MAX_KEY_LENGTH = 200;
/** Nesting levels turned into dotted keys; anything deeper is kept as the value at that level. */
export const MAX_KEY_DEPTH = 8;
const RESERVED = new Set([RAW_STATE, PARSED_STATE]);
// Parsed keys never reach `_meta.*`: those states are the network server's (meta-state-types.ts).

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
    if (RESERVED.has(key) || key === '' || key.length > MAX_KEY_LENGTH || isMetaKey(key)) continue;
    if (out.size >= MAX_KEYS_PER_ITEM) break;
    out.set(key, value);
    if (keepWhole.has(key) || !isContainer(value)) continue;
    for (const [child, nested] of Object.entries(value)) {
      if (child !== '' && !walk(nested, `${key}.${child}`, 2)) return out;
    }
  }
  return out;
}

/** Target variables of type `object` keep their value whole under their key. */
export const wholeKeys = (targetVariables: ReadonlyArray<{ key: string; type: string }>): Set<string> =>
  new Set(targetVariables.filter((v) => v.type === 'object').map((v) => v.key));
