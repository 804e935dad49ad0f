import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  acknowledged,
  decodeApdu,
  encodeI,
  encodeS,
  encodeU,
  FrameReader,
  Iec104FrameError,
} from './apci.js';
import { commandElement, decodeAsdu, decodeCp56, encodeCommand, encodeCp56 } from './asdu.js';
import { bytes, PUBLISHED_FRAMES as F } from './fixtures.js';

const asduOf = (hex: string) => {
  const apdu = decodeApdu(bytes(hex));
  if (apdu.format !== 'I') throw new Error('not an I-frame');
  return decodeAsdu(apdu.asdu);
};
const monitoring = (hex: string) => {
  const asdu = asduOf(hex);
  if (asdu.kind !== 'monitoring') throw new Error(`not monitoring: ${asdu.kind}`);
  return asdu;
};

describe('IEC 104 decoder on published frames', () => {
  it('reads the APCI of S-, U- and I-frames with their sequence numbers', () => {
    expect(decodeApdu(bytes(F.sFrame))).toEqual({ format: 'S', recv: 17 });
    expect(decodeApdu(bytes(F.startdtAct))).toEqual({ format: 'U', fn: 'STARTDT_ACT' });
    expect(decodeApdu(bytes(F.startdtCon))).toEqual({ format: 'U', fn: 'STARTDT_CON' });
    expect(decodeApdu(bytes(F.singleSq1))).toMatchObject({ format: 'I', send: 8787, recv: 258 });
    expect(decodeApdu(bytes(F.singleTimed))).toMatchObject({ format: 'I', send: 30113, recv: 233 });
  });

  it('reads single and double points in SQ=1 and SQ=0 sequences with their quality', () => {
    expect(monitoring(F.singleSq1)).toMatchObject({
      typeId: 1,
      typeName: 'M_SP_NA_1',
      sq: true,
      cot: 20,
      ca: 115,
      objects: [
        { ioa: 507, value: false, quality: { iv: false, nt: false, sb: false, bl: false } },
        { ioa: 508, value: true },
      ],
    });
    expect(monitoring(F.singleSq0).objects.map((o) => [o.ioa, o.value])).toEqual([
      [5324, true],
      [5348, false],
    ]);
    expect(monitoring(F.doubleSq0)).toMatchObject({
      typeName: 'M_DP_NA_1',
      objects: [
        { ioa: 602, value: 'on' },
        { ioa: 1003, value: 'intermediate' },
      ],
    });
  });

  it('reads normalised and short floating-point values', () => {
    const normalized = monitoring(F.normalizedSq1);
    expect(normalized.objects.map((o) => [o.ioa, o.value])).toEqual([
      [649, 0],
      [650, 495 / 32768],
    ]);
    expect(normalized.objects[0]!.quality).toEqual({ iv: false, nt: false, sb: false, bl: false, ov: false });
    const float = monitoring(F.floatSq1);
    expect(float).toMatchObject({ cot: 1, originator: 0x57, ca: 87 });
    expect(float.objects[0]!.ioa).toBe(3047);
    expect(float.objects[0]!.value).toBeCloseTo(-0.005, 6);
    expect(float.objects[1]!.value).toBeCloseTo(0.023, 6);
  });

  it('reads CP56Time2a tags as UTC times', () => {
    const single = monitoring(F.singleTimed);
    expect(single).toMatchObject({ typeName: 'M_SP_TB_1', cot: 3, ca: 128 });
    expect(single.objects[0]).toMatchObject({ ioa: 14000, value: true, timeInvalid: false });
    expect(single.objects[0]!.time!.toISOString()).toBe('2021-06-16T20:29:57.775Z');
    const normalized = monitoring(F.normalizedTimed);
    expect(normalized.objects[0]).toMatchObject({ ioa: 1, value: 1 / 32768 });
    expect(normalized.objects[0]!.time!.toISOString()).toBe('2021-04-22T09:14:32.520Z');
    const float = monitoring(F.floatTimed);
    expect(float).toMatchObject({ typeName: 'M_ME_TF_1', ca: 81, originator: 81 });
    expect(float.objects[0]!.ioa).toBe(1006);
    expect(float.objects[0]!.value).toBeCloseTo(49.976, 3);
    expect(float.objects[0]!.time!.toISOString()).toBe('2021-06-09T10:50:01.425Z');
  });

  it('reads a general interrogation and its confirmation, and encodes the same command', () => {
    expect(asduOf(F.interrogationAct)).toMatchObject({
      kind: 'command',
      typeId: 100,
      cot: 6,
      ca: 113,
      ioa: 0,
      qualifier: 20,
    });
    expect(asduOf(F.interrogationCon)).toMatchObject({
      kind: 'command',
      cot: 7,
      negative: false,
      originator: 0x71,
    });
    const asdu = encodeCommand({
      typeId: 100,
      cot: 6,
      originator: 0,
      ca: 113,
      ioa: 0,
      element: Buffer.from([20]),
    });
    expect(encodeI(0, 2, asdu)).toEqual(bytes(F.interrogationAct));
    expect(encodeU('STARTDT_ACT')).toEqual(bytes(F.startdtAct));
    expect(encodeS(17)).toEqual(bytes(F.sFrame));
  });
});

describe('IEC 104 decoder on built frames', () => {
  const asdu = (typeId: number, vsq: number, body: number[]) =>
    Buffer.from([typeId, vsq, 3, 0, 1, 0, ...body]);

  it('reads scaled values, integrated totals with their flags and the timed variants', () => {
    expect(decodeAsdu(asdu(11, 1, [10, 0, 0, 0x18, 0xfc, 0x81]))).toMatchObject({
      objects: [{ ioa: 10, value: -1000, quality: { iv: true, ov: true } }],
    });
    const tag = [...encodeCp56(new Date('2026-11-28T21:05:09.250Z'))];
    const totals = decodeAsdu(asdu(37, 1, [20, 0, 0, 0x40, 0xe2, 0x01, 0x00, 0x65, ...tag]));
    expect(totals).toMatchObject({
      typeName: 'M_IT_TB_1',
      objects: [
        { ioa: 20, value: 123456, quality: { iv: false, carry: true, adjusted: true, counterSeq: 5 } },
      ],
    });
    if (totals.kind === 'monitoring')
      expect(totals.objects[0]!.time!.toISOString()).toBe('2026-11-28T21:05:09.250Z');
    expect(decodeAsdu(asdu(31, 1, [30, 0, 0, 0x01, ...tag]))).toMatchObject({ objects: [{ value: 'off' }] });
    expect(decodeAsdu(asdu(35, 1, [30, 0, 0, 0x05, 0x00, 0x00, ...tag]))).toMatchObject({
      objects: [{ value: 5 }],
    });
    expect(decodeAsdu(asdu(15, 1, [1, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x80]))).toMatchObject({
      objects: [{ value: -1, quality: { iv: true } }],
    });
  });

  it('encodes select and execute of single and double commands', () => {
    expect(commandElement('single', true, true)).toEqual(Buffer.from([0x81]));
    expect(commandElement('single', false, false)).toEqual(Buffer.from([0x00]));
    expect(commandElement('double', true, false)).toEqual(Buffer.from([0x02]));
    expect(commandElement('double', false, true)).toEqual(Buffer.from([0x81]));
  });

  it('refuses wrong lengths with its own error and leaves unknown types to the caller', () => {
    expect(() => decodeAsdu(asdu(13, 2, [1, 0, 0, 0, 0, 0, 0, 0]))).toThrow(
      /needs 16 octets after its header, has 8/,
    );
    expect(() => decodeApdu(bytes('68 05 07 00 00 00'))).toThrow(Iec104FrameError);
    expect(() => decodeApdu(bytes('68 04 03 01 00 00'))).toThrow(/U-frame with control field/);
    expect(() => new FrameReader().push(bytes('68 02 00 00'))).toThrow(/outside 4..253/);
    expect(() => new FrameReader().push(bytes('69 04 07 00 00 00'))).toThrow(/start octet/);
    expect(decodeAsdu(asdu(200, 1, [1, 2, 3]))).toMatchObject({ kind: 'unknown', typeId: 200 });
    expect(decodeCp56(Buffer.from([0, 0, 61, 0, 1, 1, 20])).time).toBeUndefined();
  });

  it('cuts a stream into frames across chunk borders', () => {
    const reader = new FrameReader();
    const stream = Buffer.concat([bytes(F.startdtCon), bytes(F.singleSq1), bytes(F.sFrame)]);
    expect(reader.push(stream.subarray(0, 5))).toEqual([]);
    expect(reader.push(stream.subarray(5, 20)).map((f) => f.length)).toEqual([6]);
    expect(reader.push(stream.subarray(20)).map((f) => f.length)).toEqual([17, 6]);
  });

  it('counts acknowledgements within the window, across the sequence wrap, and refuses others', () => {
    expect(acknowledged(5, 3, 8)).toBe(2);
    expect(acknowledged(1, 32766, 3)).toBe(3);
    expect(acknowledged(9, 3, 8)).toBeUndefined();
  });
});

describe('IEC 104 decoder fuzzing', () => {
  const decodeAll = (chunk: Uint8Array) => {
    for (const frame of new FrameReader().push(Buffer.from(chunk))) {
      const apdu = decodeApdu(frame);
      if (apdu.format === 'I') decodeAsdu(apdu.asdu);
    }
  };
  const ownErrorOnly = (run: () => void) => {
    try {
      run();
    } catch (error) {
      if (!(error instanceof Iec104FrameError)) throw error;
    }
  };

  it('throws nothing but its own error for any byte stream', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (chunk) => ownErrorOnly(() => decodeAll(chunk))),
      {
        numRuns: 2000,
      },
    );
  });

  it('throws nothing but its own error for well-framed APDUs with any ASDU', () => {
    const apdu = fc
      .record({
        typeId: fc.constantFrom(1, 3, 9, 11, 13, 15, 30, 31, 34, 35, 36, 37, 45, 46, 100, 103, 7),
        rest: fc.uint8Array({ minLength: 5, maxLength: 240 }),
      })
      .map(({ typeId, rest }) => encodeI(0, 0, Buffer.from([typeId, ...rest])));
    fc.assert(
      fc.property(apdu, (frame) => ownErrorOnly(() => decodeAll(frame))),
      { numRuns: 3000 },
    );
  });
});
