import { MAX_ARRAY_ITEMS } from '../../../ingest/ingest.types.js';
import type { WebhookItem } from '../../connector-kind.js';
import { resolvePointer } from './json-pointer.js';

/**
 * One WebSocket message into packets (docs/connectors/websocket.md):
 * - `json` (default): the message, text or binary, must be UTF-8 JSON: an object, or an array of at
 *   most 50 objects. With a device id pointer each object is a packet of the device named at the
 *   pointer; with a fixed device id the whole message is one packet of that device.
 * - `any`: the message's bytes as they are are one packet of the fixed device, for its driver.
 * Every packet carries `_meta.frame` (`text` or `binary`).
 * Anything else is a WebSocketMessageError with a message a tenant may read (the connector log).
 */

export interface MessageMatching {
  messages: 'json' | 'any';
  /** Tokens of the device id pointer (json-pointer.ts), or undefined for the fixed device id. */
  pointer?: readonly string[];
  /** The pointer as configured, for messages. */
  pointerText?: string;
  deviceId?: string;
}

export class WebSocketMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebSocketMessageError';
  }
}

const MAX_DEVICE_ID = 200;
const utf8 = new TextDecoder('utf-8', { fatal: true });

const kindOf = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : typeof value === 'object'
        ? 'an object'
        : `a ${typeof value}`;

function parseJson(data: Buffer, binary: boolean): unknown {
  let text: string;
  try {
    text = utf8.decode(data);
  } catch {
    throw new WebSocketMessageError(
      `The ${binary ? 'binary' : 'text'} message is not UTF-8 text, so not JSON`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new WebSocketMessageError(`The message is not JSON (${data.length} bytes)`);
  }
}

function deviceKeyOf(item: unknown, matching: MessageMatching): string {
  if (!matching.pointer) {
    if (!matching.deviceId) throw new WebSocketMessageError('The connector names no device id');
    return matching.deviceId;
  }
  const value = resolvePointer(item, matching.pointer);
  const key = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof key !== 'string' || key === '' || key.length > MAX_DEVICE_ID)
    throw new WebSocketMessageError(
      `No device id at ${matching.pointerText ?? 'the pointer'}: found ${value === undefined ? 'nothing' : kindOf(value)}`,
    );
  return key;
}

export function readMessage(data: Buffer, binary: boolean, matching: MessageMatching): WebhookItem[] {
  const meta = { fields: { frame: binary ? 'binary' : 'text' } };
  if (matching.messages === 'any') {
    if (data.length === 0) throw new WebSocketMessageError('The message is empty');
    return [{ deviceKey: deviceKeyOf(undefined, { ...matching, pointer: undefined }), payload: data, meta }];
  }
  const document = parseJson(data, binary);
  const items = Array.isArray(document) ? document : [document];
  if (items.length === 0 || items.length > MAX_ARRAY_ITEMS)
    throw new WebSocketMessageError(
      `A message holds 1 to ${MAX_ARRAY_ITEMS} objects; this one ${items.length}`,
    );
  for (const item of items)
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw new WebSocketMessageError(`The message holds ${kindOf(item)} where an object belongs`);
  if (!matching.pointer) return [{ deviceKey: deviceKeyOf(document, matching), payload: data, meta }];
  return items.map((item) => ({
    deviceKey: deviceKeyOf(item, matching),
    payload: Buffer.from(JSON.stringify(item)),
    meta,
  }));
}
