import { Decoder, Tag } from 'cbor-x';
import { ParseError, type ParserPlugin } from '../parser.types.js';
import { setOwn, toValues } from './values.js';

// Maps always come back as Map, so keys are copied with setOwn and `__proto__` stays data.
const decoder = new Decoder({ mapsAsObjects: false, useRecords: false });

/** Deeper than any real device payload; bounds the recursion below. */
const MAX_DEPTH = 64;

/**
 * CBOR (RFC 8949) via cbor-x: a map becomes values, an array of maps a list of values (at most
 * 50). What JSON cannot hold is converted: byte strings to hex, dates to ISO-8601, big integers
 * to numbers when exact and to decimal strings otherwise, NaN and infinities to null.
 */
export const cborParser: ParserPlugin = {
  type: 'cbor',
  validate: () => [],
  parse: async (payload) => {
    let decoded: unknown;
    try {
      decoded = decoder.decode(payload);
    } catch (error) {
      throw new ParseError(`Payload is not valid CBOR: ${(error as Error).message}`);
    }
    return toValues(toJsonValue(decoded, 0), 'CBOR payload');
  },
};

export function toJsonValue(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new ParseError(`CBOR payload is nested deeper than ${MAX_DEPTH} levels`);
  switch (typeof value) {
    case 'undefined':
      return null;
    case 'number':
      return Number.isFinite(value) ? (Object.is(value, -0) ? 0 : value) : null;
    case 'bigint':
      return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
    case 'string':
    case 'boolean':
      return value;
    case 'object':
      break;
    default:
      return String(value);
  }
  if (value === null) return null;
  if (value instanceof Uint8Array)
    return Buffer.from(value.buffer, value.byteOffset, value.length).toString('hex');
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Tag) return toJsonValue(value.value, depth + 1);
  if (Array.isArray(value) || value instanceof Set) return [...value].map((v) => toJsonValue(v, depth + 1));
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number>);
  const out: Record<string, unknown> = {};
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  for (const [key, item] of entries) {
    const name = typeof key === 'string' ? key : JSON.stringify(toJsonValue(key, depth + 1));
    setOwn(out, name, toJsonValue(item, depth + 1));
  }
  return out;
}
