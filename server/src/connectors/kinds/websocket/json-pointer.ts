/**
 * JSON Pointer (RFC 6901): `/device/id` names `doc.device.id`; `~1` stands for `/` and `~0` for `~`
 * inside a token; `""` is the whole document. Array items are addressed by their decimal index.
 */

/** The tokens of a pointer, or undefined when it is not one (it must be empty or start with `/`). */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  const tokens = pointer.slice(1).split('/');
  // `~` may only start `~0` or `~1` (RFC 6901, section 3).
  if (tokens.some((t) => /~(?![01])/.test(t))) return undefined;
  return tokens.map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

/** The value the tokens point at, or undefined when nothing is there. */
export function resolvePointer(document: unknown, tokens: readonly string[]): unknown {
  let value = document;
  for (const token of tokens) {
    if (Array.isArray(value)) {
      if (!ARRAY_INDEX.test(token)) return undefined;
      value = value[Number(token)];
    } else if (typeof value === 'object' && value !== null && Object.hasOwn(value, token)) {
      value = (value as Record<string, unknown>)[token];
    } else {
      return undefined;
    }
  }
  return value;
}

/**
 * Writes `value` at the tokens into an object, creating objects on the way; false when a value on
 * the way is no object (an array or a scalar), so nothing is written.
 */
export function setPointer(
  document: Record<string, unknown>,
  tokens: readonly string[],
  value: unknown,
): boolean {
  if (tokens.length === 0) return false;
  let at: Record<string, unknown> = document;
  for (const token of tokens.slice(0, -1)) {
    if (['__proto__', 'constructor', 'prototype'].includes(token)) return false;
    const next = Object.hasOwn(at, token) ? at[token] : undefined;
    if (next === undefined) {
      const created: Record<string, unknown> = {};
      at[token] = created;
      at = created;
    } else if (typeof next === 'object' && next !== null && !Array.isArray(next)) {
      at = next as Record<string, unknown>;
    } else {
      return false;
    }
  }
  const last = tokens[tokens.length - 1]!;
  if (['__proto__', 'constructor', 'prototype'].includes(last)) return false;
  at[last] = value;
  return true;
}
