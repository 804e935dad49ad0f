import { ModbusDecodeError, encodeValue } from './modbus-codec.js';
import type { RegisterEntry } from './modbus-map.js';

/** A write a downlink asks for, resolved against the device's register map. */
export type WriteCommand =
  | { entry: RegisterEntry; kind: 'registers'; registers: Buffer }
  | { entry: RegisterEntry; kind: 'coil'; value: boolean };

const KEYS = new Set(['state', 'table', 'address', 'unitId', 'type', 'wordOrder', 'byteOrder', 'value']);

/**
 * A downlink's bytes as a write: a JSON object naming a register of the device's map, by `state`
 * (`{"state":"setpoint","value":21.5}`) or by `table` and `address` (and `unitId` where the map has
 * the address on more than one unit): `{"table":"holding","address":10,"type":"float32","value":21.5}`.
 * The map entry says how the value is encoded; `type`, `wordOrder` and `byteOrder`, when given,
 * must agree with it. Only holding registers and coils can be written, and only those mapped to the
 * device: a device's downlinks cannot reach another device's registers.
 */
export function parseCommand(bytes: Buffer, entries: readonly RegisterEntry[]): WriteCommand {
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new ModbusDecodeError('A modbus downlink is a JSON object, e.g. {"state":"setpoint","value":21.5}');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new ModbusDecodeError('A modbus downlink is a JSON object, e.g. {"state":"setpoint","value":21.5}');
  }
  const command = doc as Record<string, unknown>;
  const unknown = Object.keys(command).filter((k) => !KEYS.has(k));
  if (unknown.length > 0)
    throw new ModbusDecodeError(`Unknown field ${JSON.stringify(unknown[0])} in the downlink`);
  const entry = targetOf(command, entries);
  for (const key of ['type', 'wordOrder', 'byteOrder'] as const) {
    if (command[key] !== undefined && command[key] !== entry[key]) {
      throw new ModbusDecodeError(
        `${key} ${JSON.stringify(command[key])} differs from the register map's ${JSON.stringify(entry[key])} for ${entry.state}`,
      );
    }
  }
  if (entry.table === 'coil') {
    const value = command.value;
    if (value !== true && value !== false && value !== 0 && value !== 1) {
      throw new ModbusDecodeError('A coil takes true, false, 1 or 0');
    }
    return { entry, kind: 'coil', value: value === true || value === 1 };
  }
  if (typeof command.value !== 'number') throw new ModbusDecodeError('A register takes a number as value');
  return { entry, kind: 'registers', registers: encodeValue(command.value, entry) };
}

function targetOf(command: Record<string, unknown>, entries: readonly RegisterEntry[]): RegisterEntry {
  let matches: RegisterEntry[];
  let what: string;
  if (command.state !== undefined) {
    if (typeof command.state !== 'string') throw new ModbusDecodeError('state must be a string');
    matches = entries.filter((e) => e.state === command.state);
    what = `state ${JSON.stringify(command.state)}`;
  } else {
    const { table, address, unitId } = command;
    if (typeof table !== 'string' || typeof address !== 'number') {
      throw new ModbusDecodeError('Name the register by state, or by table and address');
    }
    if (unitId !== undefined && typeof unitId !== 'number')
      throw new ModbusDecodeError('unitId must be a number');
    matches = entries.filter(
      (e) => e.table === table && e.address === address && (unitId === undefined || e.unitId === unitId),
    );
    what = `${table} ${address}${unitId === undefined ? '' : ` on unit ${unitId}`}`;
  }
  if (matches.length === 0) throw new ModbusDecodeError(`The device's register map has no ${what}`);
  if (matches.length > 1)
    throw new ModbusDecodeError(`The device's register map has ${what} more than once; name the unitId`);
  const entry = matches[0]!;
  if (entry.table !== 'holding' && entry.table !== 'coil') {
    throw new ModbusDecodeError(
      `${entry.state} is a ${entry.table} ${entry.table === 'input' ? 'register' : 'input'}: read-only`,
    );
  }
  return entry;
}
