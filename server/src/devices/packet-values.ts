import type { ValueType } from '../drivers/device-driver.entity.js';
import { parsedOnArrival } from '../drivers/parsers/index.js';
import type { DriverParsing } from '../ingest/driver-parsing.js';
import type { PacketMeta } from '../ingest/packet-meta.js';
import { parsePackets } from '../ingest/parse-packet.stage.js';
import type { DeviceRef } from '../ingest/resolve-device.stage.js';
import { stateDeclarations } from './device-state-types.js';

/** A value of a packet that does not fit the type the device's driver declares for its key. */
export interface ValueMismatch {
  key: string;
  value: unknown;
  valueType: ValueType;
  warning: string;
}

/** A packet of the history as read, with what checking it needs. */
export interface PacketToCheck {
  id: string;
  receivedAt: Date;
  source: string;
  status: string | null;
  meta: PacketMeta | null;
  payload: Buffer;
}

/**
 * Parsing time one history read may spend on this thread (the broker's); the packets after it are
 * left unchecked. Only built-in parsers run here (below), so a page of packets takes a few ms.
 */
export const CHECK_BUDGET_MS = 50;

/**
 * The values of history packets checked against the device's driver, on read as its states are
 * (device-state-types.ts): ingest keeps no parsed values with a packet and pays nothing for this.
 * Each parsed packet is parsed again by the ingest stage itself (same keys, metadata and codec
 * `variables`) with the driver as it is now, so an edited driver applies at once, as it does to the
 * states. Per packet: the mismatches, [] when all values fit (or the driver declares nothing), null
 * when not checked (it did not parse, then or now, or the budget ran out). A driver whose parser runs
 * its author's script is not re-run: user code stays off the broker's thread (parsedOnArrival, ADR
 * 0104), so its packets are not checked.
 */
export async function packetMismatches(
  parsing: DriverParsing,
  device: DeviceRef,
  address: { connectorId: string; deviceKey: string },
  packets: readonly PacketToCheck[],
  budgetMs = CHECK_BUDGET_MS,
  now: () => number = () => performance.now(),
): Promise<Array<ValueMismatch[] | null>> {
  if (!parsedOnArrival(device.driver)) return packets.map(() => null);
  const variables = device.driver?.targetVariables ?? [];
  const declare = stateDeclarations(variables);
  const deadline = now() + budgetMs;
  const checked: Array<ValueMismatch[] | null> = [];
  for (const packet of packets) {
    if (packet.status !== 'parsed') checked.push(null);
    // Nothing declared, nothing to misfit: no need to parse.
    else if (variables.length === 0) checked.push([]);
    else if (now() > deadline) checked.push(null);
    else checked.push(await mismatchesOf(parsing, device, { ...address, ...packet }, declare));
  }
  return checked;
}

async function mismatchesOf(
  parsing: DriverParsing,
  device: DeviceRef,
  packet: PacketToCheck & { connectorId: string; deviceKey: string },
  declare: ReturnType<typeof stateDeclarations>,
): Promise<ValueMismatch[] | null> {
  const stored = {
    id: BigInt(packet.id),
    connectorId: packet.connectorId,
    deviceKey: packet.deviceKey,
    payload: packet.payload,
    source: packet.source,
    receivedAt: packet.receivedAt,
    ...(packet.meta ? { meta: packet.meta } : {}),
  };
  const [outcome] = await parsePackets([{ packet: stored, device }], parsing);
  if (outcome?.status !== 'parsed') return null;
  const mismatches: ValueMismatch[] = [];
  for (const update of outcome.updates) {
    for (const [key, value] of Object.entries(update.states)) {
      const declared = declare(key, value);
      if (declared.warning && declared.valueType)
        mismatches.push({ key, value, valueType: declared.valueType, warning: declared.warning });
    }
  }
  return mismatches;
}
