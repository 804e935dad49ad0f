import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { binaryParser, type FieldType } from './binary.parser.js';

const parse = (bytes: Buffer, fields: unknown[]) => binaryParser.parse(bytes, { type: 'binary', fields });

type IntType = Extract<FieldType, `${'u' | ''}int${8 | 16 | 32}`>;
type Endian = 'big' | 'little';

/** Node's own reader and writer for each width, signedness and byte order: the reference. */
const REFERENCE: Record<
  IntType,
  { width: number; min: number; max: number; suffix: Record<Endian, string> }
> = {
  uint8: { width: 1, min: 0, max: 0xff, suffix: { big: 'UInt8', little: 'UInt8' } },
  int8: { width: 1, min: -0x80, max: 0x7f, suffix: { big: 'Int8', little: 'Int8' } },
  uint16: { width: 2, min: 0, max: 0xffff, suffix: { big: 'UInt16BE', little: 'UInt16LE' } },
  int16: { width: 2, min: -0x8000, max: 0x7fff, suffix: { big: 'Int16BE', little: 'Int16LE' } },
  uint32: { width: 4, min: 0, max: 0xffffffff, suffix: { big: 'UInt32BE', little: 'UInt32LE' } },
  int32: { width: 4, min: -0x80000000, max: 0x7fffffff, suffix: { big: 'Int32BE', little: 'Int32LE' } },
};
const INT_TYPES = Object.keys(REFERENCE) as IntType[];

const write = (buffer: Buffer, type: IntType, endian: Endian, value: number, offset: number) =>
  (buffer as unknown as Record<string, (v: number, o: number) => number>)[
    `write${REFERENCE[type].suffix[endian]}`
  ]!.call(buffer, value, offset);
const read = (buffer: Buffer, type: IntType, endian: Endian, offset: number) =>
  (buffer as unknown as Record<string, (o: number) => number>)[`read${REFERENCE[type].suffix[endian]}`]!.call(
    buffer,
    offset,
  );

/** A type, a byte order, a value of that type and where in a random buffer it sits. */
const placedInt = fc
  .record({ type: fc.constantFrom(...INT_TYPES), endian: fc.constantFrom<Endian>('big', 'little') })
  .chain(({ type, endian }) =>
    fc.record({
      type: fc.constant(type),
      endian: fc.constant(endian),
      value: fc.integer({ min: REFERENCE[type].min, max: REFERENCE[type].max }),
      before: fc.uint8Array({ maxLength: 8 }),
      after: fc.uint8Array({ maxLength: 8 }),
    }),
  );

describe('binary parser', () => {
  it('reads every integer width, signed and unsigned, in both byte orders (Buffer.write* → parse)', async () => {
    await fc.assert(
      fc.asyncProperty(placedInt, async ({ type, endian, value, before, after }) => {
        const bytes = Buffer.concat([
          Buffer.from(before),
          Buffer.alloc(REFERENCE[type].width),
          Buffer.from(after),
        ]);
        write(bytes, type, endian, value, before.length);
        const values = await parse(bytes, [{ key: 'v', offset: before.length, type, endian }]);
        expect(values).toEqual({ v: value });
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees with Buffer.read* on arbitrary bytes (two’s complement of every bit pattern)', async () => {
    const input = fc.record({
      type: fc.constantFrom(...INT_TYPES),
      endian: fc.constantFrom<Endian>('big', 'little'),
      bytes: fc.uint8Array({ minLength: 4, maxLength: 12 }),
    });
    await fc.assert(
      fc.asyncProperty(input, async ({ type, endian, bytes }) => {
        const buffer = Buffer.from(bytes);
        const offset = buffer.length - REFERENCE[type].width;
        const values = await parse(buffer, [{ key: 'v', offset, type, endian }]);
        expect(values).toEqual({ v: read(buffer, type, endian, offset) });
      }),
      { numRuns: 2000 },
    );
  });

  it('hits the edges of two’s complement exactly', async () => {
    const bytes = Buffer.from('80ff7f8000ffff800000007fffffff', 'hex');
    await expect(
      parse(bytes, [
        { key: 'a', offset: 0, type: 'int8' },
        { key: 'b', offset: 1, type: 'int8' },
        { key: 'c', offset: 2, type: 'int8' },
        { key: 'd', offset: 3, type: 'int16' },
        { key: 'e', offset: 5, type: 'int16' },
        { key: 'f', offset: 7, type: 'int32' },
        { key: 'g', offset: 11, type: 'int32' },
        { key: 'h', offset: 5, type: 'uint16', endian: 'little' },
      ]),
    ).resolves.toEqual({ a: -128, b: -1, c: 127, d: -32768, e: -1, f: -2147483648, g: 2147483647, h: 65535 });
  });

  it('reads floats, 24-bit integers and bits, and applies scale and add', async () => {
    const bytes = Buffer.alloc(16);
    bytes.writeFloatLE(1.5, 0);
    bytes.writeDoubleBE(-2.25, 4);
    bytes.writeIntBE(-2, 12, 3);
    bytes[15] = 0b0000_0100;
    await expect(
      parse(bytes, [
        { key: 'f32', offset: 0, type: 'float32', endian: 'little' },
        { key: 'f64', offset: 4, type: 'float64' },
        { key: 'i24', offset: 12, type: 'int24' },
        { key: 'u24', offset: 12, type: 'uint24', scale: 0.1, add: -1 },
        { key: 'bit2', offset: 15, type: 'bool', bit: 2 },
        { key: 'bit0', offset: 15, type: 'bool', bit: 0 },
        { key: 'any', offset: 15, type: 'bool' },
      ]),
    ).resolves.toEqual({ f32: 1.5, f64: -2.25, i24: -2, u24: 1677720.4, bit2: true, bit0: false, any: true });
    await expect(
      parse(Buffer.from([0x01, 0x02]), [{ key: 't', offset: 0, type: 'uint16', scale: 0.1 }]),
    ).resolves.toEqual({ t: 25.8 });
  });

  it('refuses a field beyond the payload with a message naming it', async () => {
    await expect(parse(Buffer.from([1, 2, 3]), [{ key: 'temp', offset: 2, type: 'int16' }])).rejects.toThrow(
      'Field "temp" needs bytes 2..3 but the payload has 3 bytes',
    );
  });

  it('validates the layout: unknown type, negative offset, missing and duplicate key', () => {
    const problems = binaryParser.validate({
      type: 'binary',
      fields: [
        { key: 'a', offset: 0, type: 'int12' },
        { key: 'b', offset: -1, type: 'uint8' },
        { offset: 0, type: 'uint8' },
        { key: 'a', offset: 1, type: 'uint8' },
        { key: 'c', offset: 0, type: 'uint8', endian: 'middle', scale: 'x', bit: 1 },
        'not an object',
      ],
    });
    expect(problems).toMatchObject([
      {
        path: '/fields/0/type',
        keyword: 'enum',
        message: expect.stringMatching(/unknown type "int12"/) as string,
      },
      {
        path: '/fields/1/offset',
        keyword: 'minimum',
        params: { limit: 0 },
        message: 'offset must be an integer from 0 to 65535',
      },
      {
        path: '/fields/2/key',
        keyword: 'required',
        params: { missingProperty: 'key' },
        message: 'key is required',
      },
      { path: '/fields/3/key', keyword: 'unique', params: { value: 'a' }, message: 'duplicate key "a"' },
      {
        path: '/fields/4/endian',
        keyword: 'enum',
        params: { allowedValues: ['big', 'little'] },
        message: "endian must be 'big' or 'little'",
      },
      {
        path: '/fields/4/scale',
        keyword: 'type',
        params: { type: 'number' },
        message: 'scale must be a number',
      },
      // Only a bool field has bits: no keyword says that, the message does.
      { path: '/fields/4/bit', message: 'bit applies to bool fields only' },
      {
        path: '/fields/5',
        keyword: 'type',
        params: { type: 'object' },
        message: 'a field must be an object',
      },
    ]);
    expect(problems[6]).not.toHaveProperty('keyword');
    expect(binaryParser.validate({ type: 'binary' })).toHaveLength(1);
    expect(binaryParser.validate({ type: 'binary', fields: [] })).toHaveLength(1);
    expect(
      binaryParser.validate({ type: 'binary', fields: [{ key: 'a', offset: 0, type: 'uint8' }] }),
    ).toEqual([]);
  });

  it('compiles a layout once and refuses an invalid one at compile time', async () => {
    const compiled = await binaryParser.compile!({
      type: 'binary',
      fields: [{ key: 'a', offset: 0, type: 'int8' }],
    });
    await expect(compiled.parse(Buffer.from([0xfe]))).resolves.toEqual({ a: -2 });
    await expect(binaryParser.compile!({ type: 'binary', fields: [{ key: 'a' }] })).rejects.toThrow(
      /Invalid binary layout/,
    );
  });
});
