import {
  ModbusDecodeError,
  checkAnswer,
  decodeBit,
  decodeValue,
  wordsOf,
  type ModbusTable,
  type Order,
  type ValueEncoding,
  type ValueType,
} from './modbus-codec.js';

/** One register-map entry as stored in a modbus connector's `registers` setting. */
export interface RegisterSetting {
  deviceId: string;
  state: string;
  unitId?: number;
  table: ModbusTable;
  address: number;
  type?: ValueType;
  wordOrder?: Order;
  byteOrder?: Order;
  scale?: number;
  offset?: number;
  /** false: the entry is only a target for writes (a command register), never read. */
  poll?: boolean;
}

/** Settings of a modbus connector as stored. */
export interface ModbusConfig {
  host: string;
  port?: number;
  unitId?: number;
  pollIntervalMs?: number;
  timeoutMs?: number;
  /** `every-poll`: each poll stores every value; `change`: only values that differ from the last stored. */
  report?: 'every-poll' | 'change';
  registers: RegisterSetting[];
}

export const DEFAULT_PORT = 502;
export const DEFAULT_UNIT_ID = 1;
export const DEFAULT_POLL_MS = 5000;
export const DEFAULT_TIMEOUT_MS = 3000;
/** The protocol's limits per read request (Modbus Application Protocol 1.1b3, 6.1 to 6.4). */
export const MAX_REGISTERS_PER_READ = 125;
export const MAX_BITS_PER_READ = 2000;

/** An entry with its defaults filled in. */
export interface RegisterEntry extends ValueEncoding {
  deviceId: string;
  state: string;
  unitId: number;
  table: ModbusTable;
  address: number;
  poll: boolean;
}

/** One read request: adjacent entries of one unit and table. */
export interface ReadGroup {
  unitId: number;
  table: ModbusTable;
  address: number;
  count: number;
  entries: RegisterEntry[];
}

export const isBitTable = (table: ModbusTable): boolean => table === 'coil' || table === 'discrete';

/** Registers (or bits) an entry takes. */
export const widthOf = (entry: Pick<RegisterEntry, 'table' | 'type'>): number =>
  isBitTable(entry.table) ? 1 : wordsOf(entry.type);

export function entriesOf(config: Pick<ModbusConfig, 'unitId' | 'registers'>): RegisterEntry[] {
  return config.registers.map((r) => ({
    deviceId: r.deviceId,
    state: r.state,
    unitId: r.unitId ?? config.unitId ?? DEFAULT_UNIT_ID,
    table: r.table,
    address: r.address,
    type: r.type ?? 'uint16',
    wordOrder: r.wordOrder ?? 'big',
    byteOrder: r.byteOrder ?? 'big',
    scale: r.scale ?? 1,
    offset: r.offset ?? 0,
    poll: r.poll ?? true,
  }));
}

/**
 * The reads one poll makes: entries of the same unit and table whose registers touch or overlap
 * become one request of at most 125 registers (2000 bits). Registers between entries are never
 * read, so a gap in a device's map cannot turn a good read into an "illegal data address".
 */
export function groupReads(entries: readonly RegisterEntry[]): ReadGroup[] {
  const sorted = entries
    .filter((e) => e.poll)
    .sort((a, b) => a.unitId - b.unitId || a.table.localeCompare(b.table) || a.address - b.address);
  const groups: ReadGroup[] = [];
  let current: ReadGroup | undefined;
  for (const entry of sorted) {
    const end = entry.address + widthOf(entry);
    const max = isBitTable(entry.table) ? MAX_BITS_PER_READ : MAX_REGISTERS_PER_READ;
    if (
      current &&
      current.unitId === entry.unitId &&
      current.table === entry.table &&
      entry.address <= current.address + current.count &&
      Math.max(end, current.address + current.count) - current.address <= max
    ) {
      current.count = Math.max(end, current.address + current.count) - current.address;
      current.entries.push(entry);
      continue;
    }
    current = {
      unitId: entry.unitId,
      table: entry.table,
      address: entry.address,
      count: end - entry.address,
      entries: [entry],
    };
    groups.push(current);
  }
  return groups;
}

/** One entry's value out of its group's answer, or why it has none. */
export type EntryValue =
  { entry: RegisterEntry; value: number | boolean } | { entry: RegisterEntry; error: string };

/**
 * The values of a group's answer (`data`: the registers or bits as they arrived). An answer of the
 * wrong size throws (the link is out of step with its peer); a value that cannot be a state (NaN)
 * is that entry's error only.
 */
export function decodeGroup(group: ReadGroup, data: Buffer): EntryValue[] {
  checkAnswer(group.table, data, group.count);
  return group.entries.map((entry) => {
    const index = entry.address - group.address;
    try {
      return {
        entry,
        value: isBitTable(group.table) ? decodeBit(data, index) : decodeValue(data, index, entry),
      };
    } catch (error) {
      if (error instanceof ModbusDecodeError) return { entry, error: error.message };
      throw error;
    }
  });
}
