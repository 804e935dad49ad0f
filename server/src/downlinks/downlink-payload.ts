import { errors } from '../platform/errors.js';

/** What a caller asks to send: raw bytes (hex or base64) or `data` for the driver's encodeDownlink. */
export interface DownlinkInput {
  fPort?: number;
  bytes?: string;
  /** How `bytes` is written; hex unless said (hex digits are valid base64 too, so it is never guessed). */
  encoding?: 'hex' | 'base64';
  data?: unknown;
  confirmed?: boolean;
}

export const MIN_F_PORT = 1;
/** LoRaWAN application ports; 224 and above are reserved for the protocol. */
export const MAX_F_PORT = 223;
export const MAX_DOWNLINK_BYTES = 2048;

const HEX = /^(?:[0-9a-f]{2})*$/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The bytes of `bytes` in its encoding; a 400 naming the field when they are not that encoding. */
export function decodeBytes(text: string, encoding: 'hex' | 'base64' = 'hex'): Buffer {
  const compact = text.replace(/\s+/g, '');
  const ok = encoding === 'hex' ? HEX.test(compact) : BASE64.test(compact);
  if (!ok) {
    throw errors.validation(
      encoding === 'hex'
        ? 'bytes must be hex, two digits per byte'
        : 'bytes must be base64 (RFC 4648, padded)',
      [{ path: '/bytes' }],
    );
  }
  const bytes = Buffer.from(compact, encoding);
  if (bytes.length > MAX_DOWNLINK_BYTES) {
    throw errors.validation(`A downlink carries at most ${MAX_DOWNLINK_BYTES} bytes`, [{ path: '/bytes' }]);
  }
  return bytes;
}

/** Exactly one of `bytes` and `data`. */
export function checkOneSource(input: DownlinkInput): 'bytes' | 'data' {
  const hasBytes = input.bytes !== undefined;
  const hasData = input.data !== undefined;
  if (hasBytes === hasData) {
    throw errors.validation('Give exactly one of bytes and data', [{ path: hasBytes ? '/data' : '/bytes' }]);
  }
  return hasBytes ? 'bytes' : 'data';
}

/** The fPort to store: required where the connector carries one, else optional (null). */
export function checkFPort(fPort: number | null | undefined, source: string, required = true): number | null {
  if (fPort === undefined || fPort === null) {
    if (!required) return null;
    throw errors.validation(`fPort is required (${source} gives none)`, [{ path: '/fPort' }]);
  }
  if (!Number.isInteger(fPort) || fPort < MIN_F_PORT || fPort > MAX_F_PORT) {
    throw errors.validation(`fPort must be ${MIN_F_PORT} to ${MAX_F_PORT}, not ${fPort}`, [
      { path: '/fPort' },
    ]);
  }
  return fPort;
}
