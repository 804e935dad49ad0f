import { ParseError, type Decoded, type PacketMeta } from '../parser.types.js';
import { isPlainObject, toValues } from './values.js';

/**
 * The LoRa Alliance payload codec API (TS013) as a driver script: a vendor's codec file defines
 * `decodeUplink(input)` and maybe `encodeDownlink(input)` / `decodeDownlink(input)`, and runs
 * unchanged. These helpers build the codec's input from what the ingest path knows and read its
 * `{data, warnings, errors}` results; the sandbox call itself is javascript.parser.ts's.
 */

export const DECODE_UPLINK = 'decodeUplink';
export const ENCODE_DOWNLINK = 'encodeDownlink';
export const DECODE_DOWNLINK = 'decodeDownlink';

/**
 * The uplink decoders and downlink encoders network servers ran before TS013, which vendors still
 * publish beside (or instead of) a TS013 codec: ChirpStack v3's `Decode(fPort, bytes, variables)` /
 * `Encode(fPort, obj, variables)` and The Things Network V2's `Decoder(bytes, port)` /
 * `Encoder(object, port)`. They return the decoded object itself, or the bytes themselves.
 */
export const LEGACY_DECODERS = [
  { name: 'Decode', params: ['fPort', 'bytes', 'variables'] },
  { name: 'Decoder', params: ['bytes', 'port'] },
] as const;
export const LEGACY_ENCODERS = [
  { name: 'Encode', params: ['fPort', 'obj', 'variables'] },
  { name: 'Encoder', params: ['object', 'port'] },
] as const;

/** Warnings or errors kept per packet, and characters per message. */
const MAX_MESSAGES = 20;
const MAX_MESSAGE_CHARS = 500;

export type Variables = Record<string, unknown>;

/** `input.variables`: the driver's `variables` setting, overlaid by the device's (`meta.variables`). */
export function variablesOf(driverVariables: unknown, meta: PacketMeta): Variables {
  return {
    ...(isPlainObject(driverVariables) ? driverVariables : {}),
    ...(isPlainObject(meta.variables) ? meta.variables : {}),
  };
}

const fPortOf = (meta: PacketMeta): number | undefined =>
  typeof meta.fPort === 'number' && Number.isInteger(meta.fPort) ? meta.fPort : undefined;

/**
 * The network server's receive time, else the time the packet arrived here, else now (a sample in
 * the driver test): codecs rely on it being a date (ISO here; a Date in the script).
 */
const recvTimeOf = (meta: PacketMeta): string => {
  for (const value of [meta.recvTime, meta.receivedAt]) {
    if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return value;
    if (value instanceof Date) return value.toISOString();
  }
  return new Date().toISOString();
};

/** The JSON the sandbox turns into `decodeUplink(input)` / `decodeDownlink(input)`. */
export function uplinkInput(payload: Buffer, meta: PacketMeta, variables: Variables): string {
  return JSON.stringify({
    input: {
      bytes: Array.from(payload),
      fPort: fPortOf(meta),
      recvTime: recvTimeOf(meta),
      variables,
    },
  });
}

export function downlinkInput(data: unknown, variables: Variables): string {
  return JSON.stringify({ input: { data: data ?? null, variables } });
}

/** The arguments of a legacy decoder (`LEGACY_DECODERS`), each taking the ones it names. */
export function legacyUplinkInput(payload: Buffer, meta: PacketMeta, variables: Variables): string {
  const fPort = fPortOf(meta);
  return JSON.stringify({ bytes: Array.from(payload), fPort, port: fPort, variables });
}

/** The arguments of a legacy encoder (`LEGACY_ENCODERS`); the port is the one the downlink names. */
export function legacyDownlinkInput(data: unknown, meta: PacketMeta, variables: Variables): string {
  const fPort = fPortOf(meta);
  return JSON.stringify({ obj: data ?? null, object: data ?? null, fPort, port: fPort, variables });
}

/** A codec's `warnings`/`errors`: a list of messages (a single string is taken as one). */
function messages(value: unknown, name: string, fn: string): string[] {
  if (value === undefined || value === null) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list)) {
    throw new ParseError(`${fn} returned "${name}" that is not a list of messages`, 'PARSER_ERROR');
  }
  const out = list
    .slice(0, MAX_MESSAGES)
    .map((m) =>
      (typeof m === 'string' ? m : JSON.stringify(m)).replaceAll('\0', '').slice(0, MAX_MESSAGE_CHARS),
    );
  if (list.length > MAX_MESSAGES) out.push(`… ${list.length - MAX_MESSAGES} more ${name}`);
  return out;
}

/** Characters of a codec's unusable result quoted in the error message. */
const MAX_QUOTED_CHARS = 200;

const quote = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS)}…` : text;
};

function resultObject(result: unknown, fn: string): Record<string, unknown> {
  if (!isPlainObject(result)) {
    throw new ParseError(
      `${fn} must return an object {data, warnings, errors}; it returned ${quote(result)}`,
      'PARSER_ERROR',
    );
  }
  return result;
}

/**
 * `{data, warnings?, errors?}` of decodeUplink/decodeDownlink. `data` follows the payload shape
 * rule (an object, or at most 50 objects); with `errors` the data is not used.
 */
export function readDecoded(result: unknown, fn: string): Decoded {
  const object = resultObject(result, fn);
  const warnings = messages(object.warnings, 'warnings', fn);
  const errors = messages(object.errors, 'errors', fn);
  if (errors.length > 0) return { values: [], warnings, errors };
  if (object.data === undefined || object.data === null) {
    // Quoted: codecs put their reason under other keys (`error`, `warnings`) for payloads they reject.
    throw new ParseError(`${fn} returned neither data nor errors: ${quote(object)}`, 'PARSER_ERROR');
  }
  return { values: toValues(object.data, `The data of ${fn}`, 'PARSER_ERROR'), warnings };
}

/**
 * `{bytes, fPort?, warnings?, errors?}` of encodeDownlink, or of a legacy encoder (`fn`) whose bytes
 * were wrapped so; bytes are checked to be octets.
 */
export function readEncoded(
  result: unknown,
  fn: string = ENCODE_DOWNLINK,
): {
  bytes: number[];
  fPort: number | null;
  warnings: string[];
  errors: string[];
} {
  const object = resultObject(result, fn);
  const warnings = messages(object.warnings, 'warnings', fn);
  const errors = messages(object.errors, 'errors', fn);
  if (errors.length > 0) return { bytes: [], fPort: null, warnings, errors };
  const { bytes, fPort } = object;
  if (
    !Array.isArray(bytes) ||
    !bytes.every((b) => typeof b === 'number' && Number.isInteger(b) && b >= 0 && b <= 255)
  ) {
    throw new ParseError(`${fn} must return bytes as a list of integers 0–255`, 'PARSER_ERROR');
  }
  if (fPort !== undefined && fPort !== null) {
    if (typeof fPort !== 'number' || !Number.isInteger(fPort) || fPort < 1 || fPort > 223) {
      throw new ParseError(`${fn} returned fPort ${JSON.stringify(fPort)}; expected 1–223`, 'PARSER_ERROR');
    }
  }
  return { bytes: bytes as number[], fPort: typeof fPort === 'number' ? fPort : null, warnings, errors };
}
