/**
 * Values in Modbus registers and bits: what the register map's `type`, `wordOrder`, `byteOrder`,
 * `scale` and `offset` say, in both directions. Pure functions; the link (modbus-link.ts) does the
 * I/O. Everything a peer can send ends here, so each function either returns a value or throws
 * `ModbusDecodeError` with a message a tenant may read.
 */

export const REGISTER_TABLES = ['holding', 'input'] as const;
export const BIT_TABLES = ['coil', 'discrete'] as const;
export const MODBUS_TABLES = [...REGISTER_TABLES, ...BIT_TABLES] as const;
export type ModbusTable = (typeof MODBUS_TABLES)[number];

export const VALUE_TYPES = [
  'int16',
  'uint16',
  'int32',
  'uint32',
  'float32',
  'int64',
  'uint64',
  'float64',
] as const;
export type ValueType = (typeof VALUE_TYPES)[number];
export type Order = 'big' | 'little';

/** How a value sits in its registers (registers tables only; bits are booleans). */
export interface ValueEncoding {
  type: ValueType;
  /** `big`: the most significant register first (the Modbus convention); `little`: swapped words. */
  wordOrder: Order;
  /** `big`: the high byte first within each register (the Modbus convention); `little`: swapped. */
  byteOrder: Order;
  /** value = raw × scale + offset. */
  scale: number;
  offset: number;
}

export class ModbusDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModbusDecodeError';
  }
}

const WORDS: Record<ValueType, number> = {
  int16: 1,
  uint16: 1,
  int32: 2,
  uint32: 2,
  float32: 2,
  int64: 4,
  uint64: 4,
  float64: 4,
};

/** Registers a value of `type` takes. */
export const wordsOf = (type: ValueType): number => WORDS[type];

/** The bytes in big-endian value order, from registers as they arrived (and back: it is its own inverse). */
function reorder(bytes: Buffer, encoding: Pick<ValueEncoding, 'wordOrder' | 'byteOrder'>): Buffer {
  const words = bytes.length / 2;
  const out = Buffer.alloc(bytes.length);
  for (let i = 0; i < words; i++) {
    const from = encoding.wordOrder === 'big' ? i : words - 1 - i;
    const hi = bytes[from * 2]!;
    const lo = bytes[from * 2 + 1]!;
    out[i * 2] = encoding.byteOrder === 'big' ? hi : lo;
    out[i * 2 + 1] = encoding.byteOrder === 'big' ? lo : hi;
  }
  return out;
}

/**
 * The value at register `index` (0-based within `registers`, two bytes each) as a number, scaled.
 * 64-bit integers beyond ±2^53 lose precision (states are JSON numbers). NaN and infinities are
 * refused: a state holds a finite number.
 */
export function decodeValue(registers: Buffer, index: number, encoding: ValueEncoding): number {
  const words = wordsOf(encoding.type);
  if (!Number.isInteger(index) || index < 0 || registers.length < (index + words) * 2) {
    throw new ModbusDecodeError(
      `the answer holds ${Math.floor(registers.length / 2)} registers, ${encoding.type} at ${index} needs ${index + words}`,
    );
  }
  const raw = reorder(registers.subarray(index * 2, (index + words) * 2), encoding);
  const value = readRaw(raw, encoding.type);
  if (!Number.isFinite(value))
    throw new ModbusDecodeError(`the ${encoding.type} value is not a finite number`);
  const scaled = value * encoding.scale + encoding.offset;
  if (!Number.isFinite(scaled)) throw new ModbusDecodeError('the scaled value is not a finite number');
  return scaled;
}

function readRaw(raw: Buffer, type: ValueType): number {
  switch (type) {
    case 'int16':
      return raw.readInt16BE(0);
    case 'uint16':
      return raw.readUInt16BE(0);
    case 'int32':
      return raw.readInt32BE(0);
    case 'uint32':
      return raw.readUInt32BE(0);
    case 'float32':
      return raw.readFloatBE(0);
    case 'int64':
      return Number(raw.readBigInt64BE(0));
    case 'uint64':
      return Number(raw.readBigUInt64BE(0));
    case 'float64':
      return raw.readDoubleBE(0);
  }
}

const INTEGER_RANGE: Partial<Record<ValueType, [bigint, bigint]>> = {
  int16: [-(2n ** 15n), 2n ** 15n - 1n],
  uint16: [0n, 2n ** 16n - 1n],
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
};

/**
 * The registers that hold `value` (a state's value: scale and offset are undone), in the order the
 * device expects. Integer types round to the nearest raw value and refuse one out of their range.
 */
export function encodeValue(value: number, encoding: ValueEncoding): Buffer {
  if (!Number.isFinite(value)) throw new ModbusDecodeError('the value must be a finite number');
  if (encoding.scale === 0) throw new ModbusDecodeError('a register with scale 0 cannot be written');
  const raw = (value - encoding.offset) / encoding.scale;
  const bytes = Buffer.alloc(wordsOf(encoding.type) * 2);
  const range = INTEGER_RANGE[encoding.type];
  if (range) {
    if (!Number.isFinite(raw)) throw new ModbusDecodeError('the value is out of range');
    const int = BigInt(Math.round(raw));
    if (int < range[0] || int > range[1]) {
      throw new ModbusDecodeError(`${value} does not fit in ${encoding.type} (raw ${int})`);
    }
    writeInteger(bytes, int, encoding.type);
  } else if (encoding.type === 'float32') {
    if (Math.abs(raw) > 3.4028234663852886e38)
      throw new ModbusDecodeError(`${value} does not fit in float32`);
    bytes.writeFloatBE(raw, 0);
  } else {
    bytes.writeDoubleBE(raw, 0);
  }
  return reorder(bytes, encoding);
}

function writeInteger(bytes: Buffer, int: bigint, type: ValueType): void {
  if (type === 'int16') bytes.writeInt16BE(Number(int), 0);
  else if (type === 'uint16') bytes.writeUInt16BE(Number(int), 0);
  else if (type === 'int32') bytes.writeInt32BE(Number(int), 0);
  else if (type === 'uint32') bytes.writeUInt32BE(Number(int), 0);
  else if (type === 'int64') bytes.writeBigInt64BE(int, 0);
  else bytes.writeBigUInt64BE(int, 0);
}

/** Bit `index` of a coil or discrete-input answer (least significant bit of the first byte first). */
export function decodeBit(bits: Buffer, index: number): boolean {
  if (!Number.isInteger(index) || index < 0 || index >= bits.length * 8) {
    throw new ModbusDecodeError(`the answer holds ${bits.length * 8} bits, bit ${index} is missing`);
  }
  return ((bits[index >> 3]! >> (index & 7)) & 1) === 1;
}

/**
 * Checks an answer's size against what was asked: a peer that sends fewer registers or bits than
 * requested would otherwise shift every value after the gap.
 */
export function checkAnswer(table: ModbusTable, data: Buffer, count: number): void {
  const bits = table === 'coil' || table === 'discrete';
  const expected = bits ? Math.ceil(count / 8) : count * 2;
  if (data.length !== expected) {
    throw new ModbusDecodeError(
      `the answer to a read of ${count} ${table} ${bits ? 'bits' : 'registers'} has ${data.length} bytes, not ${expected}`,
    );
  }
}

/** Names of the Modbus exception codes (Modbus Application Protocol 1.1b3, section 7). */
const EXCEPTIONS: Record<number, string> = {
  1: 'illegal function',
  2: 'illegal data address',
  3: 'illegal data value',
  4: 'server device failure',
  5: 'acknowledge',
  6: 'server device busy',
  8: 'memory parity error',
  10: 'gateway path unavailable',
  11: 'gateway target device failed to respond',
};

export const exceptionName = (code: number): string => EXCEPTIONS[code] ?? `exception code ${code}`;
