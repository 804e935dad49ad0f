import { isUtf8 } from 'node:buffer';

/**
 * Parsers (CBOR, binary layouts, sandboxed JS) can return values JSON cannot hold or that
 * PostgreSQL's jsonb refuses: bigint, byte arrays, dates, maps, NaN and NUL characters. One such
 * value must never make a whole batch's INSERT fail, so every parsed value passes through here.
 */

const MAX_DEPTH = 32;

/** A JSON-safe copy of `value`; `undefined` (and functions, symbols) become `undefined` and are dropped by callers. */
export function toJsonValue(value: unknown, depth = 0): unknown {
  if (value === null) return null;
  switch (typeof value) {
    case 'string':
      return stripNul(value);
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'boolean':
      return value;
    case 'bigint':
      return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
    case 'object':
      break;
    default:
      return undefined;
  }
  if (depth >= MAX_DEPTH) return null;
  if (value instanceof Uint8Array)
    return Buffer.from(value.buffer, value.byteOffset, value.length).toString('base64');
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Array.isArray(value)) return value.map((item) => toJsonValue(item, depth + 1) ?? null);
  const entries: Iterable<[unknown, unknown]> =
    value instanceof Map ? value.entries() : Object.entries(value as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [key, item] of entries) {
    const converted = toJsonValue(item, depth + 1);
    if (converted !== undefined) out[stripNul(String(key))] = converted;
  }
  return out;
}

// jsonb cannot store U+0000.
const stripNul = (text: string): string => (text.includes('\0') ? text.replaceAll('\0', '') : text);

/** The packet as the `_raw` state shows it: UTF-8 text when it is text, otherwise base64. */
export function rawText(payload: Buffer): string {
  if (!isUtf8(payload)) return payload.toString('base64');
  // NUL and the other C0 controls (bar tab, CR, LF) mark binary data that happens to be valid UTF-8.
  return hasControlBytes(payload) ? payload.toString('base64') : payload.toString('utf8');
}

function hasControlBytes(payload: Buffer): boolean {
  for (const byte of payload) if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) return true;
  return false;
}
