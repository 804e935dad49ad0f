import { MAX_ARRAY_ITEMS } from './ingest.types.js';
import type { DriverParsing } from './driver-parsing.js';
import { rawText, toJsonValue } from './json-value.js';
import { PARSED_STATE, RAW_STATE, stateEntries, wholeKeys } from './state-keys.js';
import { metaStates } from './packet-meta.js';
import type { DeviceRef, ResolvedPacket } from './resolve-device.stage.js';
import type { StoredPacket } from './packet-store.js';

/**
 * Stage 2: a resolved packet becomes state updates of its device.
 *
 * Failure behaviour: never throws. An unknown device yields no update (`unknown-device`); a
 * parser error keeps the `_raw` update and marks the packet `parse-error` with the parser's message;
 * a device without a driver gets `_raw` only. A parser that returns an array yields one update per
 * item, in order (at most MAX_ARRAY_ITEMS; more is a parse error). Nested values become states
 * under dotted keys (state-keys.ts). A codec's `errors` mark the packet `parse-error` with them;
 * its `warnings` are kept on the packet; its console lines go to the debug log.
 *
 * A packet with metadata (packet-meta.ts) also sets its `_meta.*` states, whatever the parser does.
 * A network-server message that is not an uplink (`meta.event` join, status, location) has no
 * payload for the driver: it sets only its `_meta.*` states (no `_raw`, no parse).
 */

export type PacketStatus = 'parsed' | 'unknown-device' | 'device-inactive' | 'parse-error' | 'failed';

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
  /** A codec's warnings about this packet, and frame-counter notices; absent or empty for most. */
  warnings?: string[];
  /** The frame counter went back (`reset`) or repeated (frame-counter.ts); absent for most. */
  frameCounter?: 'reset' | 'repeat';
  updates: StateUpdate[];
}

export { MAX_KEYS_PER_ITEM, PARSED_STATE, RAW_STATE } from './state-keys.js';

/** Where a script's console lines go (the debug log), with the packet they came from. */
export type ScriptLog = (fields: { deviceId: string; packetId: string; lines: string[] }) => void;

export async function parsePackets(
  resolved: ResolvedPacket[],
  parsing: DriverParsing,
  scriptLog?: ScriptLog,
): Promise<PacketOutcome[]> {
  return Promise.all(resolved.map((r) => parseOne(r, parsing, scriptLog)));
}

/**
 * What a parser learns about a packet: `parse(bytes, meta)` gets all of it; a TS013 codec's
 * `decodeUplink(input)` gets `fPort`, `recvTime` (the network server's receive time when known, else
 * the packet's arrival here) and `variables` (the driver's, overlaid by the device's keyValueData).
 */
const metaOf = (packet: StoredPacket, device: DeviceRef) => {
  const receivedAt = packet.receivedAt.toISOString();
  return {
    ...packet.meta,
    deviceKey: packet.deviceKey,
    connectorId: packet.connectorId,
    source: packet.source,
    receivedAt,
    recvTime: packet.meta?.receivedAt ?? receivedAt,
    ...(device.variables ? { variables: device.variables } : {}),
  };
};

/** Whether the packet is an uplink, the only kind of packet whose payload a driver parses. */
const isUplink = (packet: StoredPacket) => !packet.meta?.event || packet.meta.event === 'uplink';

async function parseOne(
  { packet, device }: ResolvedPacket,
  parsing: DriverParsing,
  scriptLog?: ScriptLog,
): Promise<PacketOutcome> {
  if (!device) return { packet, device, status: 'unknown-device', error: null, warnings: [], updates: [] };
  // Deactivated on purpose: kept in the history, nothing else (no states, no notice, not failed).
  if (device.inactive)
    return { packet, device, status: 'device-inactive', error: null, warnings: [], updates: [] };
  const update = (states: Record<string, unknown>): StateUpdate => ({
    deviceId: device.id,
    accountId: device.accountId,
    permissionScopeId: device.permissionScopeId,
    packetId: packet.id,
    receivedAt: packet.receivedAt,
    states,
  });
  const meta = packet.meta ? metaStates(packet.meta) : undefined;
  if (!isUplink(packet))
    return {
      packet,
      device,
      status: 'parsed',
      error: null,
      warnings: [],
      updates: meta ? [update(meta)] : [],
    };
  const raw = rawText(packet.payload);
  // `_raw` first, then the metadata: the states of the packet's first update.
  const first = (): Record<string, unknown> => (meta ? { [RAW_STATE]: raw, ...meta } : { [RAW_STATE]: raw });
  if (!device.driver)
    return { packet, device, status: 'parsed', error: null, warnings: [], updates: [update(first())] };
  const driver = device.driver;
  let items: unknown[];
  let warnings: string[] = [];
  const failed = (message: string): PacketOutcome => ({
    packet,
    device,
    status: 'parse-error',
    // PostgreSQL text cannot hold NUL; parser messages may quote payload bytes.
    error: message.replaceAll('\0', ''),
    warnings,
    updates: [update(first())],
  });
  try {
    const outcome = await parsing.parse(driver, packet.payload, metaOf(packet, device));
    if (outcome.logs?.length)
      scriptLog?.({ deviceId: device.id, packetId: packet.id.toString(), lines: outcome.logs });
    warnings = outcome.codecWarnings ?? [];
    if (outcome.errors?.length) return failed(`The codec reported: ${outcome.errors.join('; ')}`);
    items = outcome.values;
    if (items.length > MAX_ARRAY_ITEMS)
      throw new Error(`The parser returned ${items.length} items; at most ${MAX_ARRAY_ITEMS} are allowed`);
  } catch (error) {
    const logs = (error as { logs?: unknown }).logs;
    if (Array.isArray(logs) && logs.length > 0)
      scriptLog?.({ deviceId: device.id, packetId: packet.id.toString(), lines: logs.map(String) });
    return failed(error instanceof Error ? error.message : String(error));
  }
  const keepWhole = wholeKeys(driver.targetVariables);
  const updates = items.map((item, i) => {
    const values = toJsonValue(item);
    const states: Record<string, unknown> = i === 0 ? first() : {};
    states[PARSED_STATE] = values ?? null;
    if (values !== null && typeof values === 'object' && !Array.isArray(values)) {
      for (const [key, value] of stateEntries(values as Record<string, unknown>, keepWhole)) {
        // Defined, not assigned: a `__proto__` key is a state like any other.
        Object.defineProperty(states, key, { value, enumerable: true, writable: true, configurable: true });
      }
    }
    return update(states);
  });
  return { packet, device, status: 'parsed', error: null, warnings, updates };
}
