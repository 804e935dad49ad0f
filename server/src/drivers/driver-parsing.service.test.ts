import { encode } from 'cbor-x';
import { describe, expect, it } from 'vitest';
import type { TargetVariable } from './device-driver.entity.js';
import { DriverParsing, type DriverForParsing } from './driver-parsing.service.js';
import { ParseError } from './parser.types.js';

const VARIABLES: TargetVariable[] = [
  { key: 'flow', type: 'number', unit: 'm³/h' },
  { key: 'open', type: 'boolean' },
];

const driver = (parser: DriverForParsing['parser'], updatedAt = new Date(1000)): DriverForParsing => ({
  id: 'driver-1',
  updatedAt,
  parser,
  targetVariables: VARIABLES,
});

describe('DriverParsing', () => {
  it('parses with the driver parser and always returns a list of values', async () => {
    const parsing = new DriverParsing();
    await expect(
      parsing.parse(driver({ type: 'json' }), Buffer.from('{"flow": 2.5, "open": true}')),
    ).resolves.toEqual({
      values: [{ flow: 2.5, open: true }],
      warnings: [],
      states: [{ flow: 2.5, open: true }],
      codecWarnings: [],
      errors: [],
      logs: [],
    });
    await expect(
      parsing.parse(
        { ...driver({ type: 'cbor' }), id: 'driver-2' },
        Buffer.from(encode([{ flow: 1 }, { flow: 2 }])),
      ),
    ).resolves.toEqual({
      values: [{ flow: 1 }, { flow: 2 }],
      warnings: [],
      states: [{ flow: 1 }, { flow: 2 }],
      codecWarnings: [],
      errors: [],
      logs: [],
    });
  });

  it('warns when a value does not fit its target variable type, keeping the value', async () => {
    const outcome = await new DriverParsing().parse(
      driver({ type: 'json' }),
      Buffer.from('[{"flow": "high", "open": 1, "other": "x"}, {"flow": null, "open": {"a": 1}}]'),
    );
    expect(outcome.values[0]).toEqual({ flow: 'high', open: 1, other: 'x' });
    expect(outcome.warnings).toEqual([
      '"flow" (item 0) is a string; the target variable expects number',
      '"open" (item 0) is a number; the target variable expects boolean',
      '"open" (item 1) is an object; the target variable expects boolean',
    ]);
  });

  it('caches the compiled parser per driver id and updatedAt', async () => {
    const parsing = new DriverParsing();
    const script = (factor: number) => ({
      type: 'javascript',
      code: `let calls = 0; function parse(bytes) { calls++; return { flow: bytes[0] * ${factor}, calls }; }`,
    });
    const v1 = driver(script(1), new Date(1000));
    expect((await parsing.parse(v1, Buffer.from([2]))).values).toEqual([{ flow: 2, calls: 1 }]);
    // Same version: the same sandbox (its global state shows the reuse).
    expect((await parsing.parse(v1, Buffer.from([2]))).values).toEqual([{ flow: 2, calls: 2 }]);
    const v2 = driver(script(10), new Date(2000));
    expect((await parsing.parse(v2, Buffer.from([2]))).values).toEqual([{ flow: 20, calls: 1 }]);
    // A reader with the older row does not throw the newer parser away.
    expect((await parsing.parse(v1, Buffer.from([2]))).values).toEqual([{ flow: 2, calls: 1 }]);
    expect((await parsing.parse(v2, Buffer.from([2]))).values).toEqual([{ flow: 20, calls: 2 }]);
    expect(parsing.size).toBe(1);
    parsing.forget('driver-1');
    expect(parsing.size).toBe(0);
  });

  it('throws ParseError for unknown types and invalid stored settings, and does not cache them', async () => {
    const parsing = new DriverParsing();
    await expect(parsing.parse(driver({ type: 'xml' }), Buffer.from('<a/>'))).rejects.toThrow(
      new ParseError('Unknown parser type "xml"'),
    );
    await expect(parsing.parse(driver({ type: 'binary', fields: [] }), Buffer.from([1]))).rejects.toThrow(
      /Invalid binary layout/,
    );
    await expect(
      parsing.parse(driver({ type: 'javascript', code: 'nope(' }), Buffer.from([1])),
    ).rejects.toThrow(/SyntaxError/);
    expect(parsing.size).toBe(0);
  });

  it('parses once with an unsaved configuration', async () => {
    const parsing = new DriverParsing();
    await expect(
      parsing.parseOnce(
        { type: 'binary', fields: [{ key: 'flow', offset: 0, type: 'int8' }] },
        VARIABLES,
        Buffer.from([0xff]),
      ),
    ).resolves.toMatchObject({ values: [{ flow: -1 }], warnings: [], states: [{ flow: -1 }] });
    expect(parsing.size).toBe(0);
  });
});
