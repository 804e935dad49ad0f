import { encode } from 'cbor-x';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_ARRAY_ITEMS } from '../../ingest/ingest.types.js';
import { cborParser } from './cbor.parser.js';

const parse = (bytes: Uint8Array) => cborParser.parse(Buffer.from(bytes), { type: 'cbor' });

/** JSON values without -0 (CBOR keeps the sign, JSON state storage does not). */
const scalar = fc.oneof(
  fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => (Object.is(d, -0) ? 0 : d)),
  fc.string(),
  fc.boolean(),
  fc.constant(null),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.string(), tie('value'), { maxKeys: 5 }),
  ),
}));
const map = fc.dictionary(fc.string(), value, { maxKeys: 12 });

describe('cbor parser', () => {
  it('round-trips random maps: encode → parse gives the same values', async () => {
    await fc.assert(
      fc.asyncProperty(map, async (input) => {
        expect(await parse(encode(input))).toEqual(input);
      }),
      { numRuns: 300 },
    );
  });

  it('round-trips random arrays of up to 50 maps', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(map, { maxLength: MAX_ARRAY_ITEMS }), async (input) => {
        expect(await parse(encode(input))).toEqual(input);
      }),
      { numRuns: 50 },
    );
  });

  it('refuses more than 50 maps, scalars and broken CBOR', async () => {
    const many = Array.from({ length: MAX_ARRAY_ITEMS + 1 }, () => ({ a: 1 }));
    await expect(parse(encode(many))).rejects.toThrow(/at most 50/);
    await expect(parse(encode(5))).rejects.toThrow(/CBOR payload is a number/);
    await expect(parse(Buffer.from('a1', 'hex'))).rejects.toThrow(/not valid CBOR/);
    await expect(parse(Buffer.from('0102', 'hex'))).rejects.toThrow(/not valid CBOR/);
  });

  it('converts what JSON cannot hold', async () => {
    const input = new Map<unknown, unknown>([
      [1, 'numeric key'],
      ['bytes', new Uint8Array([0xde, 0xad])],
      ['date', new Date(0)],
      ['big', 2n ** 70n],
      ['small', 5n],
      ['nan', NaN],
      ['undef', undefined],
      ['__proto__', { x: 1 }],
    ]);
    const values = (await parse(encode(input))) as Record<string, unknown>;
    expect(values).toEqual({
      '1': 'numeric key',
      bytes: 'dead',
      date: '1970-01-01T00:00:00.000Z',
      big: '1180591620717411303424',
      small: 5,
      nan: null,
      undef: null,
      ['__proto__']: { x: 1 },
    });
    expect(Object.getPrototypeOf(values)).toBe(Object.prototype);
    expect(Object.keys(values)).toContain('__proto__');
  });

  it('refuses absurd nesting instead of overflowing the stack', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200; i++) deep = { a: deep };
    await expect(parse(encode(deep))).rejects.toThrow(/nested deeper/);
  });
});
