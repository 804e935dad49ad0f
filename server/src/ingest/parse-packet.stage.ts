import { MAX_ARRAY_ITEMS } from './ingest.types.js';
import type { DriverParsing } from './driver-parsing.js';
import { rawText, toJsonValue } from './json-value.js';
import type { DeviceRef, ResolvedPacket } from './resolve-device.stage.js';
import type { StoredPacket } from './packet-store.js';

/**
 * Stage 2: a resolved packet becomes state updates of its device.
 *
 * Failure behaviour: never throws. An unknown device yields no update (`unknown-device`); a
 * parser error keeps the `_raw` update and marks the packet `parse-error` with the parser's message;
 * a device without a driver gets `_raw` only. A parser that returns an array yields one update per
 * item, in order (at most MAX_ARRAY_ITEMS; more is a parse error).
 */

export type PacketStatus = 'parsed' | 'unknown-device' | 'parse-error' | 'failed';

/** One set of new state values of one device: what device_states and live consoles receive. */
export interface StateUpdate {
  deviceId: string;
  accountId: string;
  permissionScopeId: string | null;
  packetId: bigint;
  receivedAt: Date;
  /** State key → JSON value: `_raw`, `_parsed` and one entry per parsed key. */
  states: Record<string, unknown>;
}

export interface PacketOutcome {
  packet: StoredPacket;
  device: DeviceRef | null;
  status: PacketStatus;
  error: string | null;
  updates: StateUpdate[];
}

export const RAW_STATE = '_raw';
export const PARSED_STATE = '_parsed';
/** Keys a parser may produce per item; beyond it the rest are ignored (they stay in `_parsed`). */
export const MAX_KEYS_PER_ITEM = 200;
const MAX_KEY_LENGTH = 200;
const RESERVED = new Set([RAW_STATE, PARSED_STATE]);

export async function parsePackets(
  resolved: ResolvedPacket[],
  parsing: DriverParsing,
): Promise<PacketOutcome[]> {
  return Promise.all(resolved.map((r) => parseOne(r, parsing)));
}

async function parseOne({ packet, device }: ResolvedPacket, parsing: DriverParsing): Promise<PacketOutcome> {
  if (!device) return { packet, device, status: 'unknown-device', error: null, updates: [] };
  const update = (states: Record<string, unknown>): StateUpdate => ({
    deviceId: device.id,
    accountId: device.accountId,
    permissionScopeId: device.permissionScopeId,
    packetId: packet.id,
    receivedAt: packet.receivedAt,
    states,
  });
  const raw = rawText(packet.payload);
  if (!device.driver)
    return { packet, device, status: 'parsed', error: null, updates: [update({ [RAW_STATE]: raw })] };
  let items: unknown[];
  try {
    items = (await parsing.parse(device.driver, packet.payload)).values;
    if (items.length > MAX_ARRAY_ITEMS)
      throw new Error(`The parser returned ${items.length} items; at most ${MAX_ARRAY_ITEMS} are allowed`);
  } catch (error) {
    // PostgreSQL text cannot hold NUL; parser messages may quote payload bytes.
    const message = (error instanceof Error ? error.message : String(error)).replaceAll('\0', '');
    return { packet, device, status: 'parse-error', error: message, updates: [update({ [RAW_STATE]: raw })] };
  }
  const updates = items.map((item, i) => {
    const values = toJsonValue(item);
    const states: Record<string, unknown> = i === 0 ? { [RAW_STATE]: raw } : {};
    states[PARSED_STATE] = values ?? null;
    if (values !== null && typeof values === 'object' && !Array.isArray(values)) {
      let count = 0;
      for (const [key, value] of Object.entries(values)) {
        if (RESERVED.has(key) || key === '' || key.length > MAX_KEY_LENGTH) continue;
        if (++count > MAX_KEYS_PER_ITEM) break;
        states[key] = value;
      }
    }
    return update(states);
  });
  return { packet, device, status: 'parsed', error: null, updates };
}
