import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MODBUS_TABLES,
  ModbusDecodeError,
  VALUE_TYPES,
  decodeValue,
  encodeValue,
  exceptionName,
  type ValueEncoding,
} from './modbus-codec.js';
import { parseCommand } from './modbus-command.js';
import { decodeGroup, entriesOf, groupReads, type RegisterSetting } from './modbus-map.js';

const enc = (o: Partial<ValueEncoding> = {}): ValueEncoding => ({
  type: 'uint16',
  wordOrder: 'big',
  byteOrder: 'big',
  scale: 1,
  offset: 0,
  ...o,
});
const regs = (...words: number[]) => Buffer.from(words.flatMap((w) => [w >> 8, w & 0xff]));

describe('modbus values', () => {
  it('reads float32 in both word orders, negative int16 and byte-swapped registers', () => {
    // 21.5 as float32 is 0x41AC0000.
    expect(decodeValue(regs(0x41ac, 0x0000), 0, enc({ type: 'float32' }))).toBe(21.5);
    expect(decodeValue(regs(0x0000, 0x41ac), 0, enc({ type: 'float32', wordOrder: 'little' }))).toBe(21.5);
    expect(decodeValue(regs(0xac41, 0x0000), 0, enc({ type: 'float32', byteOrder: 'little' }))).toBe(21.5);
    expect(decodeValue(regs(0xff85), 0, enc({ type: 'int16' }))).toBe(-123);
    expect(decodeValue(regs(0xff85), 0, enc({ type: 'uint16' }))).toBe(65413);
    expect(decodeValue(regs(0xffff, 0xfffe), 0, enc({ type: 'int32' }))).toBe(-2);
    expect(decodeValue(regs(0x0001, 0x0000), 0, enc({ type: 'uint32', wordOrder: 'little' }))).toBe(1);
    expect(decodeValue(regs(0, 0, 0x0001, 0x0000), 0, enc({ type: 'int64' }))).toBe(65536);
    expect(decodeValue(regs(0x4035, 0x8000, 0, 0), 0, enc({ type: 'float64' }))).toBe(21.5);
    expect(decodeValue(regs(7, 215), 1, enc({ type: 'int16', scale: 0.1, offset: -1 }))).toBeCloseTo(20.5);
  });

  it('refuses NaN and a value that runs past the answer', () => {
    expect(() => decodeValue(regs(0x7fc0, 0), 0, enc({ type: 'float32' }))).toThrow(/not a finite number/);
    expect(() => decodeValue(regs(1), 0, enc({ type: 'int32' }))).toThrow(
      /holds 1 registers, int32 at 0 needs 2/,
    );
  });

  it('writes what it reads, rounding integers and refusing values out of range', () => {
    for (const e of [enc({ type: 'float32', wordOrder: 'little' }), enc({ type: 'int16', scale: 0.1 })])
      expect(decodeValue(encodeValue(-12.5, e), 0, e)).toBeCloseTo(-12.5);
    expect(encodeValue(21.5, enc({ type: 'float32' }))).toEqual(regs(0x41ac, 0));
    expect(encodeValue(2.6, enc({ type: 'uint16' }))).toEqual(regs(3));
    expect(() => encodeValue(-1, enc({ type: 'uint16' }))).toThrow(/does not fit in uint16/);
    expect(() => encodeValue(70000, enc({ type: 'int16' }))).toThrow(/does not fit in int16/);
    expect(() => encodeValue(Number.NaN, enc())).toThrow(ModbusDecodeError);
  });

  it('names exception codes', () => {
    expect(exceptionName(2)).toBe('illegal data address');
    expect(exceptionName(99)).toBe('exception code 99');
  });
});

const map = (registers: RegisterSetting[]) => entriesOf({ unitId: 1, registers });

describe('modbus register map', () => {
  it('groups touching entries of one unit and table into one read, at most 125 registers', () => {
    const entries = map([
      { deviceId: 'a', state: 't', table: 'holding', address: 0, type: 'float32' },
      { deviceId: 'a', state: 'p', table: 'holding', address: 2, type: 'int16' },
      { deviceId: 'b', state: 'gap', table: 'holding', address: 10 },
      { deviceId: 'b', state: 'other-unit', table: 'holding', address: 3, unitId: 2 },
      { deviceId: 'b', state: 'in', table: 'input', address: 3 },
      { deviceId: 'b', state: 'write-only', table: 'holding', address: 4, poll: false },
      { deviceId: 'c', state: 'c0', table: 'coil', address: 0 },
      { deviceId: 'c', state: 'c1', table: 'coil', address: 1 },
    ]);
    expect(groupReads(entries).map((g) => [g.unitId, g.table, g.address, g.count, g.entries.length])).toEqual(
      [
        [1, 'coil', 0, 2, 2],
        [1, 'holding', 0, 3, 2],
        [1, 'holding', 10, 1, 1],
        [1, 'input', 3, 1, 1],
        [2, 'holding', 3, 1, 1],
      ],
    );
    const long = map(
      Array.from({ length: 100 }, (_, i) => ({
        deviceId: 'd',
        state: `s${i}`,
        table: 'input' as const,
        address: i * 2,
        type: 'uint32' as const,
      })),
    );
    expect(groupReads(long).map((g) => g.count)).toEqual([124, 76]);
  });

  it('decodes a group and refuses an answer of the wrong size', () => {
    const [group] = groupReads(
      map([
        { deviceId: 'a', state: 't', table: 'holding', address: 0, type: 'float32', wordOrder: 'little' },
        { deviceId: 'a', state: 'n', table: 'holding', address: 2, type: 'int16' },
      ]),
    );
    expect(
      decodeGroup(group!, regs(0, 0x41ac, 0xff85)).map((v) => ('value' in v ? v.value : v.error)),
    ).toEqual([21.5, -123]);
    expect(() => decodeGroup(group!, regs(0, 0x41ac))).toThrow(/has 4 bytes, not 6/);
    const [coils] = groupReads(
      map([
        { deviceId: 'c', state: 'a', table: 'coil', address: 0 },
        { deviceId: 'c', state: 'b', table: 'coil', address: 2 },
        { deviceId: 'c', state: 'x', table: 'coil', address: 1 },
      ]),
    );
    expect(decodeGroup(coils!, Buffer.from([0b101])).map((v) => 'value' in v && v.value)).toEqual([
      true,
      false,
      true,
    ]);
  });
});

describe('modbus downlinks', () => {
  const entries = map([
    { deviceId: 'a', state: 'setpoint', table: 'holding', address: 10, type: 'float32' },
    { deviceId: 'a', state: 'pump', table: 'coil', address: 3 },
    { deviceId: 'a', state: 'flow', table: 'input', address: 1 },
  ]);
  const cmd = (doc: unknown) => parseCommand(Buffer.from(JSON.stringify(doc)), entries);

  it('writes a mapped holding register by state or address, and a coil', () => {
    expect(cmd({ state: 'setpoint', value: 21.5 })).toMatchObject({
      kind: 'registers',
      registers: regs(0x41ac, 0),
    });
    expect(cmd({ table: 'holding', address: 10, type: 'float32', value: 21.5 })).toMatchObject({
      entry: { state: 'setpoint' },
    });
    expect(cmd({ state: 'pump', value: true })).toMatchObject({ kind: 'coil', value: true });
  });

  it('refuses what it cannot write, naming why', () => {
    expect(() => parseCommand(Buffer.from('0a0b', 'hex'), entries)).toThrow(/is a JSON object/);
    expect(() => cmd({ table: 'holding', address: 11, value: 1 })).toThrow(/has no holding 11/);
    expect(() => cmd({ state: 'flow', value: 1 })).toThrow(/input register: read-only/);
    expect(() => cmd({ state: 'setpoint', type: 'int16', value: 1 })).toThrow(
      /differs from the register map/,
    );
    expect(() => cmd({ state: 'pump', value: 'on' })).toThrow(/A coil takes/);
    expect(() => cmd({ state: 'setpoint', value: 1, extra: 1 })).toThrow(/Unknown field "extra"/);
  });
});

describe('modbus decoder fuzz', () => {
  const entry = fc.record({
    deviceId: fc.constantFrom('a', 'b'),
    state: fc.string({ minLength: 1, maxLength: 4 }),
    table: fc.constantFrom(...MODBUS_TABLES),
    address: fc.integer({ min: 0, max: 200 }),
    unitId: fc.integer({ min: 0, max: 2 }),
    type: fc.constantFrom(...VALUE_TYPES),
    wordOrder: fc.constantFrom('big' as const, 'little' as const),
    byteOrder: fc.constantFrom('big' as const, 'little' as const),
    scale: fc.double({ noNaN: true, min: -1e6, max: 1e6 }),
    offset: fc.double({ noNaN: true, min: -1e6, max: 1e6 }),
  });

  it('any answer a peer sends decodes or fails with its own error', () => {
    fc.assert(
      fc.property(
        fc.array(entry, { minLength: 1, maxLength: 20 }),
        fc.uint8Array({ maxLength: 300 }),
        (rs, bytes) => {
          for (const group of groupReads(map(rs))) {
            try {
              for (const v of decodeGroup(group, Buffer.from(bytes)))
                if ('value' in v && typeof v.value === 'number') expect(Number.isFinite(v.value)).toBe(true);
            } catch (error) {
              expect(error).toBeInstanceOf(ModbusDecodeError);
            }
          }
        },
      ),
    );
  });

  it('any downlink document is a write or its own error', () => {
    const docs = fc.oneof(
      fc.uint8Array({ maxLength: 100 }).map((b) => Buffer.from(b)),
      fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v))),
      fc
        .record({
          state: fc.constantFrom('setpoint', 'pump', 'flow', 'x'),
          value: fc.oneof(fc.double(), fc.boolean(), fc.string(), fc.integer()),
          type: fc.option(fc.constantFrom(...VALUE_TYPES), { nil: undefined }),
        })
        .map((d) => Buffer.from(JSON.stringify(d))),
    );
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 5 }), docs, (rs, bytes) => {
        try {
          parseCommand(bytes, map(rs));
        } catch (error) {
          expect(error).toBeInstanceOf(ModbusDecodeError);
        }
      }),
    );
  });

  it('integer values survive a write and a read in every order', () => {
    const ints = fc.constantFrom('int16', 'uint16', 'int32', 'uint32') as fc.Arbitrary<ValueEncoding['type']>;
    fc.assert(
      fc.property(
        ints,
        fc.integer({ min: -70000, max: 70000 }),
        fc.boolean(),
        fc.boolean(),
        (type, n, w, b) => {
          const e = enc({ type, wordOrder: w ? 'big' : 'little', byteOrder: b ? 'big' : 'little' });
          let written: Buffer;
          try {
            written = encodeValue(n, e);
          } catch (error) {
            expect(error).toBeInstanceOf(ModbusDecodeError);
            return;
          }
          expect(decodeValue(written, 0, e)).toBe(n);
        },
      ),
    );
  });
});
