import { describe, expect, it } from 'vitest';
import type { IncomingPacket } from '../ingest.types.js';
import type { PacketMeta } from '../packet-meta.js';
import {
  decodeRecords,
  encodeRecord,
  encodedRecordSize,
  MAX_META_BYTES,
  recordSeqAt,
} from './spool-record.js';

function packet(overrides: Partial<IncomingPacket> = {}): IncomingPacket {
  return {
    connectorId: '0b6f6c1e-3f2a-4c1d-9a57-5c3f0e2b7d11',
    deviceKey: 'sensor-1',
    payload: Buffer.from('{"t":21.5}'),
    source: 'mqtt',
    receivedAt: new Date(1_700_000_000_123),
    ...overrides,
  };
}

/** mulberry32: a small seeded PRNG, so a failing case can be reproduced. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const ALPHABET = ['a', 'Z', '0', '-', '/', ' ', 'ä', 'ß', '温', '度', '😀', '\u0000'];

function randomString(random: () => number, maxChars: number): string {
  let text = '';
  const length = Math.floor(random() * (maxChars + 1));
  for (let i = 0; i < length; i += 1) text += ALPHABET[Math.floor(random() * ALPHABET.length)]!;
  return text;
}

function randomPacket(random: () => number): IncomingPacket {
  const payload = Buffer.alloc(Math.floor(random() * 600));
  for (let i = 0; i < payload.length; i += 1) payload[i] = Math.floor(random() * 256);
  return {
    connectorId: randomString(random, 36),
    deviceKey: randomString(random, 80),
    payload,
    source: randomString(random, 12),
    receivedAt: new Date(Math.floor(random() * 4_000_000_000_000)),
    ...(random() < 0.5
      ? {
          meta: {
            topic: randomString(random, 40).replaceAll('\0', ''),
            fCnt: Math.floor(random() * 2 ** 32),
          },
        }
      : {}),
  };
}

const META: PacketMeta = {
  fPort: 2,
  fCnt: 4711,
  devEui: '70b3d57ed005de54',
  receivedAt: '2026-11-26T03:00:00.123Z',
  gateways: [{ gatewayId: 'gw-Süd', gatewayEui: 'b827ebfffe000001', rssi: -112, snr: -3.5 }],
  dataRate: 'SF9BW125',
  decoded: { temperature: 21.5, nested: { list: [1, 2] } },
};

/**
 * A record as versions before metadata wrote it (seq 2^32 + 5, device key `zähler-7`, payload
 * 01 ff 42): spool files of such a version must replay after an upgrade.
 */
const OLD_FORMAT_RECORD =
  '4c00000082a7d4a8010000000500000000b08756febc7842046d7174742430623666366331652d336632612d346331642d39' +
  '6135372d35633366306532623764313109007ac3a4686c65722d3701ff42';

function concat(seqsAndPackets: Array<[number, IncomingPacket]>): Buffer {
  return Buffer.concat(seqsAndPackets.map(([seq, p]) => encodeRecord(seq, p)));
}

describe('spool record codec', () => {
  it('round-trips empty, binary, unicode and large packets with their seqs', () => {
    const large = Buffer.alloc(256 * 1024);
    for (let i = 0; i < large.length; i += 1) large[i] = (i * 31) & 0xff;
    const cases: Array<[number, IncomingPacket]> = [
      [1, packet({ payload: Buffer.alloc(0) })],
      [2, packet({ payload: Buffer.from([0, 255, 1, 254, 0]) })],
      [3, packet({ deviceKey: 'Kühlraum/温度/😀', source: 'webhook', connectorId: '' })],
      [2 ** 32 + 7, packet({ payload: large })],
      [Number.MAX_SAFE_INTEGER, packet({ deviceKey: '' })],
    ];
    const bytes = concat(cases);
    const decoded = decodeRecords(bytes);
    expect(decoded.torn).toBe(false);
    expect(decoded.validEnd).toBe(bytes.length);
    expect(decoded.records).toEqual(cases.map(([seq, p]) => ({ ...p, seq })));
  });

  it('round-trips metadata next to packets without it, which keep the format of versions before it', () => {
    const withMeta = packet({ meta: META, payload: Buffer.from([0xde, 0xad]) });
    const cases: Array<[number, IncomingPacket]> = [
      [1, packet()],
      [2 ** 40 + 3, withMeta],
      [3, packet({ meta: { topic: 'devices/温度/up' }, payload: Buffer.alloc(0) })],
    ];
    const bytes = concat(cases);
    const decoded = decodeRecords(bytes);
    expect(decoded).toMatchObject({ torn: false, validEnd: bytes.length });
    expect(decoded.records).toEqual(cases.map(([seq, p]) => ({ ...p, seq })));
    expect(recordSeqAt(bytes, encodeRecord(1, packet()).length)).toBe(2 ** 40 + 3);
    expect(encodeRecord(2, withMeta).length).toBe(encodedRecordSize(withMeta));
    expect(encodedRecordSize(withMeta) - encodedRecordSize(packet({ payload: withMeta.payload }))).toBe(
      4 + Buffer.byteLength(JSON.stringify(META)),
    );
    expect(() => encodedRecordSize(packet({ meta: { topic: 'x'.repeat(MAX_META_BYTES) } }))).toThrow(
      RangeError,
    );
  });

  it('decodes a record written by a version before metadata', () => {
    const bytes = Buffer.from(OLD_FORMAT_RECORD, 'hex');
    const expected = {
      seq: 2 ** 32 + 5,
      connectorId: '0b6f6c1e-3f2a-4c1d-9a57-5c3f0e2b7d11',
      deviceKey: 'zähler-7',
      payload: Buffer.from([0x01, 0xff, 0x42]),
      source: 'mqtt',
      receivedAt: new Date(1_700_000_000_123),
    };
    expect(decodeRecords(bytes)).toEqual({ records: [expected], validEnd: bytes.length, torn: false });
    // And this version writes such a packet byte for byte the same.
    expect(encodeRecord(expected.seq, expected).toString('hex')).toBe(OLD_FORMAT_RECORD);
  });

  it('sizes a record exactly and refuses fields longer than their length field', () => {
    const p = packet({ deviceKey: 'ä'.repeat(10) });
    expect(encodeRecord(9, p).length).toBe(encodedRecordSize(p));
    expect(() => encodedRecordSize(packet({ source: 'x'.repeat(256) }))).toThrow(RangeError);
    expect(() => encodedRecordSize(packet({ connectorId: 'ü'.repeat(128) }))).toThrow(RangeError);
    expect(() => encodedRecordSize(packet({ deviceKey: 'x'.repeat(65_536) }))).toThrow(RangeError);
    expect(encodedRecordSize(packet({ deviceKey: 'x'.repeat(65_535) }))).toBeGreaterThan(65_535);
  });

  it('decodes payloads as views on the input, without copying', () => {
    const bytes = new Uint8Array(encodeRecord(1, packet()));
    const [record] = decodeRecords(bytes).records;
    expect(record!.payload.buffer).toBe(bytes.buffer);
    expect(record!.payload.toString()).toBe('{"t":21.5}');
  });

  it('round-trips a few hundred random packets (seeded)', () => {
    const random = prng(20_240_611);
    for (let round = 0; round < 300; round += 1) {
      const cases: Array<[number, IncomingPacket]> = [];
      const count = 1 + Math.floor(random() * 4);
      for (let i = 0; i < count; i += 1)
        cases.push([1 + Math.floor(random() * 2 ** 40), randomPacket(random)]);
      const bytes = concat(cases);
      const decoded = decodeRecords(bytes);
      expect(decoded.torn, `round ${round}`).toBe(false);
      expect(decoded.records, `round ${round}`).toEqual(cases.map(([seq, p]) => ({ ...p, seq })));
    }
  });

  it('decodes exactly the complete records at every truncation point', () => {
    const records: Array<[number, IncomingPacket]> = [
      [1, packet()],
      [2, packet({ payload: Buffer.alloc(0), deviceKey: 'ß' })],
      [3, packet({ payload: Buffer.from('x'.repeat(40)), meta: { fPort: 1, topic: 'a/b' } })],
      [4, packet()],
    ];
    const ends: number[] = [];
    let end = 0;
    for (const [seq, p] of records) ends.push((end += encodeRecord(seq, p).length));
    const bytes = concat(records);
    for (let cut = 0; cut <= bytes.length; cut += 1) {
      const complete = ends.filter((recordEnd) => recordEnd <= cut);
      const decoded = decodeRecords(bytes.subarray(0, cut));
      expect(
        decoded.records.map((r) => r.seq),
        `cut at ${cut}`,
      ).toEqual(complete.map((_, i) => i + 1));
      expect(decoded.validEnd).toBe(complete.at(-1) ?? 0);
      expect(decoded.torn).toBe(cut !== decoded.validEnd);
    }
  });

  it('stops at a record with a flipped byte anywhere in it', () => {
    const first = encodeRecord(1, packet());
    const bytes = concat([
      [1, packet()],
      [2, packet({ deviceKey: 'second', meta: { fCnt: 9 } })],
      [3, packet()],
    ]);
    const secondLength = encodeRecord(2, packet({ deviceKey: 'second', meta: { fCnt: 9 } })).length;
    for (let at = first.length; at < first.length + secondLength; at += 1) {
      const damaged = Buffer.from(bytes);
      damaged[at] = damaged[at]! ^ 0x40;
      const decoded = decodeRecords(damaged);
      expect(
        decoded.records.map((r) => r.seq),
        `byte ${at}`,
      ).toEqual([1]);
      expect(decoded).toMatchObject({ validEnd: first.length, torn: true });
    }
  });

  it('treats garbage and an impossible length as a torn tail', () => {
    const good = encodeRecord(1, packet());
    const garbage = Buffer.concat([good, Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2, 3])]);
    expect(decodeRecords(garbage)).toMatchObject({ validEnd: good.length, torn: true });
    const tooShort = Buffer.concat([good, Buffer.alloc(40)]);
    expect(decodeRecords(tooShort)).toMatchObject({ validEnd: good.length, torn: true });
    expect(decodeRecords(new Uint8Array(0))).toEqual({ records: [], validEnd: 0, torn: false });
  });
});
