import { MAX_ARRAY_ITEMS } from '../../ingest/ingest.types.js';
import { ParseError, type ParseErrorCode, type ParsedValues } from '../parser.types.js';

/** Helpers the parser plugins share: the payload shape rule and JSON-safe objects. */

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The one payload shape rule (ARCHITECTURE.md §3): an object, or an array of at most
 * MAX_ARRAY_ITEMS objects. `what` names the source in messages ("JSON payload", "script result").
 */
export function toValues(
  decoded: unknown,
  what: string,
  code: ParseErrorCode = 'PARSE_ERROR',
): ParsedValues | ParsedValues[] {
  if (isPlainObject(decoded)) return decoded;
  if (Array.isArray(decoded)) {
    if (decoded.length > MAX_ARRAY_ITEMS) {
      throw new ParseError(
        `${what} is an array of ${decoded.length} items; at most ${MAX_ARRAY_ITEMS} are allowed per packet`,
        code,
      );
    }
    const bad = decoded.findIndex((item) => !isPlainObject(item));
    if (bad !== -1) {
      throw new ParseError(`${what} item ${bad} is ${describe(decoded[bad])}, not an object`, code);
    }
    return decoded as ParsedValues[];
  }
  throw new ParseError(`${what} is ${describe(decoded)}; expected an object or an array of objects`, code);
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Sets a key without ever touching a prototype (`__proto__` arrives as an ordinary key). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
