import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkWriteValue,
  int64,
  jsonValue,
  OpcuaValueError,
  parseWriteCommand,
  samplePacket,
  type NodeMapping,
} from './opcua-values.js';

const MAPPING: NodeMapping = {
  nodeId: 'ns=2;s=Boiler.Temperature',
  deviceId: 'boiler-1',
  state: 'temperature',
};
const AT = new Date('2031-05-01T10:00:00.000Z');
const bytes = (doc: unknown) => Buffer.from(JSON.stringify(doc));

describe('OPC UA samples as packets', () => {
  it('puts the value under the mapped state and node id, status and source time into _meta fields', () => {
    const item = samplePacket(MAPPING, { value: 21.5, status: 'Good', sourceTimestamp: AT });
    expect(item.deviceKey).toBe('boiler-1');
    expect(JSON.parse(item.payload.toString())).toEqual({ temperature: 21.5 });
    expect(item.meta).toEqual({
      fields: { nodeId: MAPPING.nodeId, statusCode: 'Good', sourceTimestamp: '2031-05-01T10:00:00.000Z' },
    });
  });

  it('keeps a Bad sample as metadata without a value, and an Uncertain one with its value', () => {
    const bad = samplePacket(MAPPING, { value: 0, status: 'BadSensorFailure', sourceTimestamp: null });
    expect(JSON.parse(bad.payload.toString())).toEqual({});
    expect(bad.meta?.fields).toEqual({ nodeId: MAPPING.nodeId, statusCode: 'BadSensorFailure' });
    const uncertain = samplePacket(MAPPING, {
      value: 3,
      status: 'UncertainLastUsableValue',
      sourceTimestamp: AT,
    });
    expect(JSON.parse(uncertain.payload.toString())).toEqual({ temperature: 3 });
  });

  it('turns variant values into JSON', () => {
    expect(jsonValue(new Date(AT))).toBe('2031-05-01T10:00:00.000Z');
    expect(jsonValue(Buffer.from([1, 2, 3]))).toBe('AQID');
    expect(jsonValue(new Float32Array([1.5, 2]))).toEqual([1.5, 2]);
    expect(jsonValue({ text: 'Kessel', locale: 'de' })).toBe('Kessel');
    expect(jsonValue(Number.NaN)).toBe('NaN');
    expect(jsonValue(undefined)).toBeNull();
    expect(int64([1, 5], true)).toBe(2 ** 32 + 5);
    expect(int64([0xffffffff, 0xffffffff], true)).toBe(-1);
    expect(int64([0xffffffff, 0xffffffff], false)).toBe(2 ** 64 - 1);
    expect(int64('x', true)).toBeNull();
  });
});

describe('OPC UA writes from downlink bytes', () => {
  it('reads node id, value and data type', () => {
    expect(parseWriteCommand(bytes({ nodeId: 'ns=1;s=Setpoint', value: 42, dataType: 'Double' }))).toEqual({
      nodeId: 'ns=1;s=Setpoint',
      value: 42,
      dataType: 'Double',
    });
    expect(parseWriteCommand(bytes({ nodeId: 'i=2258', value: true }))).toEqual({
      nodeId: 'i=2258',
      value: true,
    });
  });

  it.each([
    ['not json', /not JSON/],
    ['[1]', /JSON object/],
    [JSON.stringify({ nodeId: 'Setpoint', value: 1 }), /"nodeId" must be an OPC UA node id/],
    [JSON.stringify({ nodeId: 'ns=1;s=X', value: { a: 1 } }), /"value" must be/],
    [JSON.stringify({ nodeId: 'ns=1;s=X', value: 1, dataType: 'Quaternion' }), /"dataType" must be one of/],
    [JSON.stringify({ nodeId: 'ns=1;s=X', value: 300, dataType: 'Byte' }), /300 is not a valid Byte/],
    [JSON.stringify({ nodeId: 'ns=1;s=X', value: 1.5, dataType: 'Int32' }), /1.5 is not a valid Int32/],
    [JSON.stringify({ nodeId: 'ns=1;s=X', value: 'soon', dataType: 'DateTime' }), /not a valid DateTime/],
  ])('refuses %s with a clear message', (text, message) => {
    expect(() => parseWriteCommand(Buffer.from(text))).toThrow(message);
  });

  it('checks a value against the data type the server reports', () => {
    expect(checkWriteValue('Float', 1.25)).toBe('Float');
    expect(() => checkWriteValue('Int64', 1)).toThrow(/data type Int64 is not supported/);
    expect(() => checkWriteValue('Boolean', 1)).toThrow(/not a valid Boolean/);
  });

  it('never throws anything but its own error, whatever the bytes (fuzz)', () => {
    const doc = fc.record(
      {
        nodeId: fc.oneof(fc.string(), fc.constantFrom('ns=1;s=X', 'i=85', 'ns=99999;g=1'), fc.integer()),
        value: fc.oneof(fc.double(), fc.integer(), fc.string(), fc.boolean(), fc.constant(null), fc.object()),
        dataType: fc.oneof(
          fc.constantFrom('Double', 'Byte', 'Int16', 'DateTime', 'String', 'Boolean'),
          fc.string(),
        ),
      },
      { requiredKeys: [] },
    );
    const input = fc.oneof(
      fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
      fc.json().map((s) => Buffer.from(s)),
      doc.map((d) => bytes(d)),
    );
    fc.assert(
      fc.property(input, (buffer) => {
        try {
          const command = parseWriteCommand(buffer);
          expect(typeof command.nodeId).toBe('string');
        } catch (error) {
          expect(error).toBeInstanceOf(OpcuaValueError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('turns any value into a packet without throwing (fuzz)', () => {
    fc.assert(
      fc.property(
        fc.anything({ withDate: true, withTypedArray: true, withBigInt: true, withNullPrototype: true }),
        fc.string(),
        fc.option(fc.date({ noInvalidDate: false })),
        (value, status, at) => {
          const item = samplePacket(MAPPING, { value, status, sourceTimestamp: at });
          expect(() => JSON.parse(item.payload.toString()) as unknown).not.toThrow();
        },
      ),
      { numRuns: 1000 },
    );
  });
});
