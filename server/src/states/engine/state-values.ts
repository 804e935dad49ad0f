import type { StateValueType } from '../data-state.entity.js';

/** Pure helpers for state values: type fit, equality, numbers, and their time-series form. */

const WARNING_MAX = 300;

/** A warning when the value does not fit the state's value type (the value is kept); null fits all. */
export function valueWarning(value: unknown, valueType: StateValueType): string | null {
  if (value === null || value === undefined) return null;
  let fits: boolean;
  switch (valueType) {
    case 'number':
      fits = typeof value === 'number' && Number.isFinite(value);
      break;
    case 'integer':
      fits = typeof value === 'number' && Number.isInteger(value);
      break;
    case 'boolean':
      fits = typeof value === 'boolean';
      break;
    case 'string':
      fits = typeof value === 'string';
      break;
    case 'object':
      fits = typeof value === 'object';
      break;
    default:
      fits = true;
  }
  if (fits) return null;
  // Values come from JSON (device states, API bodies): they always serialise.
  const shown = JSON.stringify(value) ?? 'undefined';
  const text = `value ${shown.length > 120 ? `${shown.slice(0, 117)}...` : shown} does not fit value type ${valueType}`;
  return text.slice(0, WARNING_MAX);
}

/** Numbers as aggregations read them: numbers, booleans as 1/0; anything else is not a number. */
export function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return null;
}

/** JSON equality (object key order does not matter). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return (a ?? null) === (b ?? null);
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => sameValue(item, other[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  const rb = b as Record<string, unknown>;
  return ka.every((k) => Object.hasOwn(rb, k) && sameValue((a as Record<string, unknown>)[k], rb[k]));
}

/** A value as a time-series point stores it: numbers and booleans (1/0) in `value`, the rest as text. */
export function pointValue(value: unknown): { value: number | null; text: string | null } {
  if (value === null || value === undefined) return { value: null, text: null };
  if (typeof value === 'number')
    return Number.isFinite(value) ? { value, text: null } : { value: null, text: null };
  if (typeof value === 'boolean') return { value: value ? 1 : 0, text: null };
  if (typeof value === 'string') return { value: null, text: value };
  return { value: null, text: JSON.stringify(value) };
}

/** Rounds away binary noise of sums and means (0.1 + 0.2), keeping 15 significant digits. */
export function tidy(n: number | null): number | null {
  if (n === null || !Number.isFinite(n)) return null;
  return Number(n.toPrecision(15));
}
