import { describe, expect, it } from 'vitest';
import { compileScript, parseFailure } from './script-parser.test-support.js';

/**
 * A ChirpStack v3 codec in the style vendors published it: ES5, `Decode(fPort, bytes, variables)`
 * returning the object itself, `Encode(fPort, obj, variables)` returning the bytes. Written for
 * this test; no vendor's code.
 */
const CHIRPSTACK_V3 = `
function readInt16BE(bytes, i) {
  var value = (bytes[i] << 8) | bytes[i + 1];
  return value > 0x7fff ? value - 0x10000 : value;
}
function Decode(fPort, bytes, variables) {
  if (fPort === 2) return { temperature: readInt16BE(bytes, 0) / 10, humidity: bytes[2] / 2, site: variables.site };
  if (fPort === 3) return { alarm: bytes[0] === 1 };
  throw new Error('unknown port ' + fPort);
}
function Encode(fPort, obj, variables) {
  return [fPort === 10 ? 0x01 : 0x02, obj.interval >> 8, obj.interval & 0xff];
}`;

/** A The Things Network V2 decoder/encoder pair, same style. */
const TTN_V2 = `
function Decoder(bytes, port) {
  var decoded = {};
  if (port === 1) {
    decoded.battery = bytes[0] / 100 + 2;
    decoded.door = bytes[1] === 1 ? 'open' : 'closed';
  }
  return decoded;
}
function Encoder(object, port) {
  var bytes = [];
  bytes[0] = object.led ? 1 : 0;
  return bytes;
}`;

describe('decoders written for network servers before TS013', () => {
  it("runs a ChirpStack v3 Decode unchanged, by fPort, with the device's variables", async () => {
    const codec = await compileScript(CHIRPSTACK_V3, { variables: { site: 'north' } });
    await expect(codec.decode!(Buffer.from([0xff, 0x9c, 91]), { fPort: 2 })).resolves.toEqual({
      values: { temperature: -10, humidity: 45.5, site: 'north' },
      warnings: [],
      logs: [],
    });
    await expect(codec.parse(Buffer.from([1]), { fPort: 3, variables: { site: 'south' } })).resolves.toEqual({
      alarm: true,
    });
    const error = await parseFailure(codec.parse(Buffer.from([1]), { fPort: 9 }));
    expect(error.message).toBe('The parser script failed: Error: unknown port 9');
    codec.dispose?.();
  });

  it('runs a The Things Network V2 Decoder unchanged', async () => {
    const codec = await compileScript(TTN_V2);
    await expect(codec.parse(Buffer.from([150, 1]), { fPort: 1 })).resolves.toEqual({
      battery: 3.5,
      door: 'open',
    });
    codec.dispose?.();
  });

  it('encodes downlinks with Encode or Encoder on the port the downlink names', async () => {
    const chirpstack = await compileScript(CHIRPSTACK_V3);
    await expect(chirpstack.encodeDownlink!({ interval: 300 }, { fPort: 10 })).resolves.toEqual({
      bytes: [0x01, 0x01, 0x2c],
      fPort: null,
      warnings: [],
      errors: [],
      logs: [],
    });
    chirpstack.dispose?.();
    const ttn = await compileScript(TTN_V2);
    await expect(ttn.encodeDownlink!({ led: true }, { fPort: 1 })).resolves.toMatchObject({ bytes: [1] });
    ttn.dispose?.();
  });

  it('prefers decodeUplink, then parse, over a legacy decoder the script also defines', async () => {
    const wrapped = await compileScript(
      `${TTN_V2}\nfunction decodeUplink(input) { return { data: { via: 'ts013', door: Decoder(input.bytes, input.fPort).door } }; }`,
    );
    await expect(wrapped.parse(Buffer.from([150, 0]), { fPort: 1 })).resolves.toEqual({
      via: 'ts013',
      door: 'closed',
    });
    wrapped.dispose?.();
    const parse = await compileScript(`${TTN_V2}\nfunction parse(bytes, meta) { return { via: 'parse' }; }`);
    await expect(parse.parse(Buffer.from([150, 0]), { fPort: 1 })).resolves.toEqual({ via: 'parse' });
    parse.dispose?.();
  });

  it('says which legacy function returned something unusable', async () => {
    const numbers = await compileScript(
      'function Decoder(bytes, port) { return 42; } function Encoder(object, port) { return "AQ=="; }',
    );
    expect((await parseFailure(numbers.parse(Buffer.from([1])))).message).toMatch(/^The data of Decoder/);
    expect((await parseFailure(numbers.encodeDownlink!({}))).message).toBe(
      'Encoder must return bytes as a list of integers 0–255',
    );
    numbers.dispose?.();
    const none = await parseFailure(compileScript('function helper() {}'));
    expect(none.message).toContain('Decode(fPort, bytes, variables) or Decoder(bytes, port)');
  });

  it('loads vendor files that export their functions for Node, and uses a function found only there', async () => {
    const tail = await compileScript(
      'function decodeUplink(input) { return { data: { a: input.bytes[0] } }; }\nmodule.exports = { decodeUplink: decodeUplink };',
    );
    await expect(tail.parse(Buffer.from([7]))).resolves.toEqual({ a: 7 });
    tail.dispose?.();
    const only = await compileScript(
      'exports.decodeUplink = function (input) { return { data: { b: input.bytes.length } }; };\n' +
        'module.exports.encodeDownlink = function (input) { return { bytes: [input.data.on ? 1 : 0], fPort: 3 }; };',
    );
    await expect(only.parse(Buffer.from([1, 2]))).resolves.toEqual({ b: 2 });
    await expect(only.encodeDownlink!({ on: true })).resolves.toMatchObject({ bytes: [1], fPort: 3 });
    only.dispose?.();
  });
});
