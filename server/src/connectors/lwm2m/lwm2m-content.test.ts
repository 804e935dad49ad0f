import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../platform/errors.js';
import { FORMAT, decodeLwm2m, formatNumber, normalisePath } from './lwm2m-content.js';

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex');

/**
 * The Device object instance of the LwM2M TS Core's TLV example (7.4.3.2, "Single Object
 * Instance Request Example"), byte for byte as the specification prints it.
 */
const DEVICE_TLV = hex(`
  C8 00 14 4F 70 65 6E 20 4D 6F 62 69 6C 65 20 41 6C 6C 69 61 6E 63 65
  C8 01 16 4C 69 67 68 74 77 65 69 67 68 74 20 4D 32 4D 20 43 6C 69 65 6E 74
  C8 02 09 33 34 35 30 30 30 31 32 33
  C3 03 31 2E 30
  86 06 41 00 01 41 01 05
  88 07 08 42 00 0E D8 42 01 13 88
  87 08 41 00 7D 42 01 03 84
  C1 09 64
  C1 0A 0F
  83 0B 41 00 00
  C4 0D 51 82 42 8F
  C6 0E 2B 30 32 3A 30 30
  C1 10 55`);

const DEVICE_VALUES = {
  '3/0/0': 'Open Mobile Alliance',
  '3/0/1': 'Lightweight M2M Client',
  '3/0/2': '345000123',
  '3/0/3': '1.0',
  '3/0/6/0': 1,
  '3/0/6/1': 5,
  '3/0/7/0': 3800,
  '3/0/7/1': 5000,
  '3/0/8/0': 125,
  '3/0/8/1': 900,
  '3/0/9': 100,
  '3/0/10': 15,
  '3/0/11/0': 0,
  '3/0/13': 1367491215,
  '3/0/14': '+02:00',
  '3/0/16': 'U',
};

describe('LwM2M payloads', () => {
  it('reads the TS Core TLV example of the Device object, and the same values in SenML JSON', () => {
    expect(decodeLwm2m(DEVICE_TLV, FORMAT.tlv, '3/0')).toEqual(DEVICE_VALUES);
    const senml = [
      { bn: '/3/0/', n: '0', vs: 'Open Mobile Alliance' },
      { n: '1', vs: 'Lightweight M2M Client' },
      { n: '2', vs: '345000123' },
      { n: '3', vs: '1.0' },
      ...[
        ['6/0', 1],
        ['6/1', 5],
        ['7/0', 3800],
        ['7/1', 5000],
        ['8/0', 125],
        ['8/1', 900],
        ['9', 100],
        ['10', 15],
        ['11/0', 0],
        ['13', 1367491215],
      ].map(([n, v]) => ({ n, v })),
      { n: '14', vs: '+02:00' },
      { n: '16', vs: 'U' },
    ];
    expect(decodeLwm2m(Buffer.from(JSON.stringify(senml)), FORMAT.senmlJson)).toEqual(DEVICE_VALUES);
  });

  it('reads an object-level TLV (instances wrapping resources) with a float sensor value', () => {
    // Object instance 0 { resource 5700 (16-bit id) = float32 21.5, resource 5701 = "Cel" }
    const tlv = hex('08 00 0D  E4 16 44 41 AC 00 00  E3 16 45 43 65 6C');
    expect(decodeLwm2m(tlv, FORMAT.tlv, '3303')).toEqual({ '3303/0/5700': 21.5, '3303/0/5701': 'Cel' });
    // A single resource read: the TLV names the resource itself.
    expect(decodeLwm2m(hex('C1 0A 0F'), FORMAT.tlv, '3/0/10')).toEqual({ '3/0/10': 15 });
  });

  it('reads SenML CBOR with integer labels, booleans, data and object links', () => {
    const cbor = hex('81 a3 21 68 2f333330332f302f 00 64 35373030 02 fb 4035800000000000');
    expect(decodeLwm2m(cbor, FORMAT.senmlCbor)).toEqual({ '3303/0/5700': 21.5 });
    const json = [
      { bn: '/3311/0/', n: '5850', vb: true },
      { n: '5750', vd: 'AQI' },
      { bn: '/3/0/', n: '9', v: 99, t: 5 },
      { n: '20', vlo: '3:0' },
      { bn: '/1/0/', n: '1' },
    ];
    expect(decodeLwm2m(Buffer.from(JSON.stringify(json)), FORMAT.senmlJson)).toEqual({
      '3311/0/5850': true,
      '3311/0/5750': '0102',
      '3/0/9': 99,
      '3/0/20': '3:0',
    });
  });

  it('reads plain text, opaque and the OMA JSON of LwM2M 1.0 relative to the requested path', () => {
    expect(decodeLwm2m(Buffer.from('21.5'), FORMAT.text, '3303/0/5700')).toEqual({ '3303/0/5700': 21.5 });
    expect(decodeLwm2m(Buffer.from('Sim 7'), undefined, '3/0/0')).toEqual({ '3/0/0': 'Sim 7' });
    expect(decodeLwm2m(hex('0102ff'), FORMAT.opaque, '5/0/0')).toEqual({ '5/0/0': '0102ff' });
    const oma = {
      bn: '/3303/0/',
      e: [
        { n: '5700', v: 20 },
        { n: '5701', sv: 'Cel' },
      ],
    };
    expect(decodeLwm2m(Buffer.from(JSON.stringify(oma)), FORMAT.omaJson)).toEqual({
      '3303/0/5700': 20,
      '3303/0/5701': 'Cel',
    });
  });

  it('refuses what it cannot read with a message that says why', () => {
    const refused = (payload: Buffer, format: number | undefined, path?: string) => {
      try {
        decodeLwm2m(payload, format, path);
      } catch (error) {
        expect(error).toBeInstanceOf(AppError);
        expect((error as AppError).code).toBe('INVALID_PAYLOAD');
        return (error as Error).message;
      }
      throw new Error('decoded');
    };
    expect(refused(Buffer.from('{'), FORMAT.senmlJson)).toBe('The SenML JSON payload is not valid JSON');
    expect(refused(Buffer.from('{}'), FORMAT.senmlJson)).toBe('A SenML payload must be an array of records');
    expect(refused(Buffer.from('[{"n":"temp","v":1}]'), FORMAT.senmlJson)).toBe(
      'SenML name "temp" is not an LwM2M path',
    );
    expect(refused(Buffer.from('[{"n":"/1/0/1","v":"x"}]'), FORMAT.senmlJson)).toBe(
      'SenML "v" must be a finite number',
    );
    expect(refused(hex('ff00'), FORMAT.senmlCbor)).toBe('The SenML CBOR payload is not valid CBOR');
    expect(refused(hex('C8 00 14 4F'), FORMAT.tlv, '3/0')).toBe('TLV: entry 0 is longer than the payload');
    expect(refused(hex('C1 09 64'), FORMAT.tlv, '3')).toBe('TLV: a resource outside an object instance');
    expect(refused(Buffer.from('1'), FORMAT.text, '3/0')).toMatch(/needs the path of one resource/);
    expect(refused(Buffer.from('x'), 50, '3/0/0')).toBe(
      'Content-Format 50 is not an LwM2M format this server reads',
    );
    expect(refused(Buffer.alloc(70_000), FORMAT.opaque, '5/0/0')).toMatch(/more than 65536/);
  });

  it('names paths and formats as the coap package reports them', () => {
    expect(normalisePath('/3303/0/5700/')).toBe('3303/0/5700');
    expect(normalisePath('3/0/7/1')).toBe('3/0/7/1');
    expect(normalisePath('3/0/7/1/2')).toBeUndefined();
    expect(normalisePath('3/x')).toBeUndefined();
    expect(normalisePath('70000')).toBeUndefined();
    expect(formatNumber('application/vnd.oma.lwm2m+tlv')).toBe(FORMAT.tlv);
    expect(formatNumber('application/senml+cbor')).toBe(FORMAT.senmlCbor);
    expect(formatNumber(11543)).toBe(FORMAT.omaJson);
    expect(formatNumber('application/json')).toBeUndefined();
  });

  it('never throws anything but its own INVALID_PAYLOAD error, and yields only LwM2M paths (fuzz)', () => {
    const formats = [undefined, ...Object.values(FORMAT), 60, -1];
    const paths = fc.constantFrom(undefined, '', '3', '3/0', '3/0/9', '3/0/7/1', '3303/0/5700');
    const senmlRecord = fc.record(
      {
        bn: fc.oneof(fc.constantFrom('/3/0/', '/3303/', ''), fc.string()),
        n: fc.oneof(fc.constantFrom('0', '5700', '7/1'), fc.string()),
        v: fc.oneof(fc.double(), fc.string()),
        vs: fc.anything(),
        vb: fc.oneof(fc.boolean(), fc.integer()),
        vd: fc.oneof(fc.base64String(), fc.integer()),
      },
      { requiredKeys: [] },
    );
    const payload = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      fc.array(senmlRecord, { maxLength: 8 }).map((r) => new TextEncoder().encode(JSON.stringify(r))),
      fc.jsonValue().map((v) => new TextEncoder().encode(JSON.stringify(v) ?? '')),
    );
    fc.assert(
      fc.property(payload, fc.constantFrom(...formats), paths, (bytes, format, path) => {
        try {
          const values = decodeLwm2m(Buffer.from(bytes), format, path);
          for (const [key, value] of Object.entries(values)) {
            expect(normalisePath(key)).toBe(key);
            expect(['string', 'number', 'boolean']).toContain(typeof value);
          }
        } catch (error) {
          expect(error).toBeInstanceOf(AppError);
          expect((error as AppError).code).toBe('INVALID_PAYLOAD');
        }
      }),
      { numRuns: 1500 },
    );
  });
});
