import { describe, expect, it } from 'vitest';
import type { CompiledParser } from '../parser.types.js';
import { javascriptParser } from './javascript.parser.js';
import { compileScript, parseFailure } from './script-parser.test-support.js';

/** A codec in the shape vendors publish: helpers, fPort branches, TS013 results. */
const METER_CODEC = `
var UNITS = ['l', 'm3'];
function u16(b, i) { return (b[i] << 8) | b[i + 1]; }
function decodeUplink(input) {
  var b = input.bytes;
  switch (input.fPort) {
    case 1:
      var result = { data: { volume: u16(b, 0) * input.variables.scale, unit: UNITS[b[2]],
                             battery: { voltage: b[3] / 50 } }, warnings: [] };
      if (b[3] < 160) result.warnings.push('battery low');
      return result;
    case 2:
      return { data: { alarms: [{ code: b[0] }, { code: b[1] }] } };
    default:
      console.log('unknown port', input.fPort, { bytes: b });
      return { errors: ['unknown fPort ' + input.fPort] };
  }
}
function encodeDownlink(input) {
  if (typeof input.data.interval !== 'number') return { errors: ['interval missing'] };
  return { bytes: [0x10, input.data.interval >> 8, input.data.interval & 0xff], fPort: 10, warnings: [] };
}
function decodeDownlink(input) {
  return { data: { interval: (input.bytes[1] << 8) | input.bytes[2] } };
}`;

describe('TS013 payload codecs as driver scripts', () => {
  let codec: CompiledParser;

  it('decodes uplinks by fPort with the driver variables, keeping nested data and warnings', async () => {
    codec = await compileScript(METER_CODEC, { variables: { scale: 10 } });
    await expect(codec.decode!(Buffer.from([0x00, 0x2a, 1, 150]), { fPort: 1 })).resolves.toEqual({
      values: { volume: 420, unit: 'm3', battery: { voltage: 3 } },
      warnings: ['battery low'],
      logs: [],
    });
    await expect(codec.decode!(Buffer.from([7, 9]), { fPort: 2 })).resolves.toMatchObject({
      values: { alarms: [{ code: 7 }, { code: 9 }] },
      warnings: [],
    });
  });

  it("returns the codec's errors, with its console lines, instead of data", async () => {
    await expect(codec.decode!(Buffer.from([1]), { fPort: 99 })).resolves.toEqual({
      values: [],
      warnings: [],
      errors: ['unknown fPort 99'],
      logs: ['unknown port 99 {"bytes":[1]}'],
    });
  });

  it('lets device variables override the driver ones', async () => {
    const decoded = await codec.decode!(Buffer.from([0, 1, 0, 200]), { fPort: 1, variables: { scale: 2 } });
    expect(decoded.values).toMatchObject({ volume: 2 });
  });

  it('encodes and decodes downlinks', async () => {
    await expect(codec.encodeDownlink!({ interval: 3600 })).resolves.toEqual({
      bytes: [0x10, 0x0e, 0x10],
      fPort: 10,
      warnings: [],
      errors: [],
      logs: [],
    });
    await expect(codec.encodeDownlink!({})).resolves.toMatchObject({
      bytes: [],
      errors: ['interval missing'],
    });
    await expect(codec.decodeDownlink!(Buffer.from([0x10, 0x0e, 0x10]))).resolves.toMatchObject({
      values: { interval: 3600 },
    });
    codec.dispose?.();
  });

  it('hands recvTime over as a Date and fPort as given', async () => {
    const parser = await compileScript(
      `function decodeUplink(input) {
         return { data: { isDate: input.recvTime instanceof Date, year: input.recvTime.getUTCFullYear(),
                          fPort: input.fPort === undefined ? 'none' : input.fPort } };
       }`,
    );
    await expect(parser.parse(Buffer.alloc(0), { receivedAt: '2026-03-01T00:00:00.000Z' })).resolves.toEqual({
      isDate: true,
      year: 2026,
      fPort: 'none',
    });
    // A sample without any time (the driver test): now.
    await expect(parser.parse(Buffer.alloc(0), { fPort: 3 })).resolves.toEqual({
      isDate: true,
      year: new Date().getUTCFullYear(),
      fPort: 3,
    });
    parser.dispose?.();
  });

  it('prefers decodeUplink when a script also defines parse, and parse alone still works', async () => {
    const both = await compileScript(
      'function parse() { return { via: "parse" }; } function decodeUplink() { return { data: { via: "codec" } }; }',
    );
    await expect(both.parse(Buffer.alloc(1))).resolves.toEqual({ via: 'codec' });
    both.dispose?.();
    const legacy = await compileScript(
      'function parse(bytes, meta) { console.log("n", bytes.length); return { k: meta.k }; }',
    );
    await expect(legacy.decode!(Buffer.alloc(2), { k: 1 })).resolves.toEqual({
      values: { k: 1 },
      logs: ['n 2'],
    });
    expect((await parseFailure(legacy.encodeDownlink!({}))).message).toMatch(
      /does not define function encodeDownlink/,
    );
    legacy.dispose?.();
  });

  it.each([
    [
      'neither entry',
      'function helper() {}',
      /must define function parse\(bytes, meta\) or decodeUplink\(input\)/,
    ],
    [
      'a result without data or errors',
      'function decodeUplink() { return { warnings: ["x"] }; }',
      /neither data nor errors/,
    ],
    [
      'a result without data or errors, quoting what the codec said instead',
      'function decodeUplink() { return { data: null, error: "unknown frame type 7" }; }',
      /neither data nor errors: \{"data":null,"error":"unknown frame type 7"\}$/,
    ],
    [
      'a result that is not an object',
      'function decodeUplink() { return 5; }',
      /must return an object \{data, warnings, errors\}; it returned 5$/,
    ],
    [
      'a result that is null',
      'function decodeUplink() { return null; }',
      /must return an object \{data, warnings, errors\}; it returned null$/,
    ],
    [
      'errors that are not messages',
      'function decodeUplink() { return { errors: 5 }; }',
      /"errors" that is not a list/,
    ],
    [
      'data beyond 50 items',
      'function decodeUplink() { return { data: Array.from({ length: 51 }, () => ({})) }; }',
      /51 items; at most 50/,
    ],
  ])('refuses %s', async (_name, code, message) => {
    const error = await parseFailure(compileScript(code).then((p) => p.parse(Buffer.alloc(1), { fPort: 1 })));
    expect(error.code).toBe('PARSER_ERROR');
    expect(error.message).toMatch(message);
  });

  it('loads codecs that add enumerable methods to Object.prototype', async () => {
    const parser = await compileScript(
      `Object.prototype.u16 = function (i) { return (this[i] << 8) | this[i + 1]; };
       Array.prototype.sum = function () { var s = 0; for (var i = 0; i < this.length; i++) s += this[i]; return s; };
       function decodeUplink(input) { return { data: { level: input.bytes.u16(0), sum: input.bytes.sum() } }; }
       function encodeDownlink(input) { return { bytes: [input.data.level & 0xff], fPort: 2 }; }`,
    );
    await expect(parser.decode!(Buffer.from([1, 2]), { fPort: 1 })).resolves.toMatchObject({
      values: { level: 258, sum: 3 },
    });
    await expect(parser.encodeDownlink!({ level: 7 })).resolves.toMatchObject({ bytes: [7], fPort: 2 });
    parser.dispose?.();
  });

  it('starts every packet from the globals the codec loaded with, like a network server', async () => {
    // A read position kept in a top-level var and never reset, and a global assigned without var.
    const parser = await compileScript(
      `var pos = 0;
       function next(b) { return b[pos++]; }
       function decodeUplink(input) {
         var first = next(input.bytes), second = next(input.bytes);
         if (typeof seen === 'undefined') seen = 0;
         seen += 1;
         return { data: { first: first, second: second, seen: seen } };
       }`,
    );
    for (const device of ['a', 'b', 'a']) {
      await expect(
        parser.decode!(Buffer.from([5, 6, 7, 8]), { fPort: 1, deviceKey: device }),
      ).resolves.toMatchObject({ values: { first: 5, second: 6, seen: 1 } });
    }
    // Also after a call that threw half-way.
    const thrower = await compileScript(
      `var pos = 0;
       function decodeUplink(input) { pos += 2; if (input.bytes[0] === 0) throw new Error('bad'); return { data: { pos: pos } }; }`,
    );
    await parseFailure(thrower.decode!(Buffer.from([0]), { fPort: 1 }));
    await expect(thrower.decode!(Buffer.from([1]), { fPort: 1 })).resolves.toMatchObject({
      values: { pos: 2 },
    });
    parser.dispose?.();
    thrower.dispose?.();
  });

  it('refuses downlink bytes that are not octets', async () => {
    const parser = await compileScript(
      'function decodeUplink() { return { data: {} }; } function encodeDownlink() { return { bytes: [256] }; }',
    );
    expect((await parseFailure(parser.encodeDownlink!({}))).message).toMatch(/integers 0–255/);
    parser.dispose?.();
  });

  it('keeps the console lines of a script that throws, bounded per call', async () => {
    const parser = await compileScript(
      `function decodeUplink() { for (var i = 0; i < 150; i++) console.warn('line', i); throw new Error('bad frame'); }`,
    );
    const error = await parseFailure(parser.parse(Buffer.alloc(1)));
    expect(error.message).toBe('The parser script failed: Error: bad frame');
    expect(error.logs).toHaveLength(101);
    expect(error.logs[0]).toBe('warn: line 0');
    expect(error.logs.at(-1)).toBe('… 50 more lines not kept');
    parser.dispose?.();
  });

  it('loads a script of 1 MiB (a codec with large lookup tables)', async () => {
    const table = `var TABLE = [${Array.from({ length: 200_000 }, (_, i) => i % 997).join(',')}];\n`;
    const code =
      `${table}function decodeUplink(input) { return { data: { v: TABLE[input.bytes[0]] } }; }`.padEnd(
        1024 * 1024 - 1,
        ' ',
      );
    expect(javascriptParser.validate({ type: 'javascript', code })).toEqual([]);
    const parser = await compileScript(code, { timeoutMs: 1000, memoryLimitMb: 32 });
    await expect(parser.parse(Buffer.from([5]))).resolves.toEqual({ v: 5 });
    parser.dispose?.();
  });
});
