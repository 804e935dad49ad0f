import { crc32 } from 'node:zlib';
import type { IncomingPacket } from '../ingest.types.js';
import type { PacketMeta } from '../packet-meta.js';

/**
 * One spooled packet on disk, little endian:
 * `u32 length` (bytes after this field) · `u32 crc32` (of the bytes after the crc field) ·
 * `u32 seqHigh` · `u32 seqLow` · `f64 receivedAt` (epoch ms) · `u8` + source · `u8` + connectorId ·
 * `u16` + deviceKey (all utf8) · [`u32` + meta JSON (utf8)] · payload (the rest).
 *
 * The meta section is present only when the top bit of `seqHigh` is set (META_FLAG): records without
 * metadata are byte for byte what versions before it wrote, so their spool files replay unchanged
 * after an upgrade, and such packets cost nothing extra. (An older version meeting a flagged record
 * takes it as damaged: a downgrade loses what the spool still held with metadata.)
 *
 * The crc makes a torn tail (a crash mid-write) or a damaged record detectable: decoding stops at
 * the first record that is incomplete, fails its crc or is malformed.
 */

export interface SpoolRecord extends IncomingPacket {
  seq: number;
}

export interface DecodedRecords {
  records: SpoolRecord[];
  /** The end of the last good record: everything after it is to be ignored. */
  validEnd: number;
  /** Whether bytes after `validEnd` exist (an incomplete, damaged or malformed record). */
  torn: boolean;
}

/** Bytes before the strings: length, crc, seq (2 × u32), receivedAt, and the three length fields. */
const FIXED_BYTES = 4 + 4 + 8 + 8 + 1 + 1 + 2;
const CRC_FROM = 8;
const MAX_U8 = 0xff;
const MAX_U16 = 0xffff;
const TWO_POW_32 = 2 ** 32;
/** seqHigh above this would make the seq exceed Number.MAX_SAFE_INTEGER. */
const MAX_SEQ_HIGH = 2 ** 21 - 1;
/** Set in the seqHigh word: a meta section follows the device key. */
const META_FLAG = 0x8000_0000;
/** Metadata larger than this is refused with the packet (a network server sends a few KiB). */
export const MAX_META_BYTES = 1024 * 1024;

// A packet's meta JSON, from its size computation to its encoding (the spool does both, in that order).
const metaJson = new WeakMap<PacketMeta, string>();

/**
 * A packet's metadata as JSON, stringified once per packet: the spool writes it, and the packet
 * store's INSERT reuses the text its record was decoded from. Strings are made storable first:
 * PostgreSQL's jsonb refuses `\u0000` and lone surrogates (`\ud800`), and the packet table would
 * refuse the whole packet with them.
 */
export function metaText(meta: PacketMeta): string {
  let text = metaJson.get(meta);
  if (text === undefined) {
    text = JSON.stringify(meta);
    if (text.includes('\\u0000') || text.includes('\\ud')) text = JSON.stringify(meta, storable);
    metaJson.set(meta, text);
  }
  return text;
}

const storable = (_key: string, value: unknown) =>
  typeof value === 'string' ? value.toWellFormed().replaceAll('\0', '') : value;

/** Encoded size of a packet's record; throws a RangeError when a field does not fit its length field. */
export function encodedRecordSize(packet: IncomingPacket): number {
  const sourceBytes = Buffer.byteLength(packet.source, 'utf8');
  const connectorIdBytes = Buffer.byteLength(packet.connectorId, 'utf8');
  const deviceKeyBytes = Buffer.byteLength(packet.deviceKey, 'utf8');
  if (sourceBytes > MAX_U8) throw new RangeError(`source is ${sourceBytes} bytes; at most ${MAX_U8}`);
  if (connectorIdBytes > MAX_U8)
    throw new RangeError(`connectorId is ${connectorIdBytes} bytes; at most ${MAX_U8}`);
  if (deviceKeyBytes > MAX_U16)
    throw new RangeError(`deviceKey is ${deviceKeyBytes} bytes; at most ${MAX_U16}`);
  let metaBytes = 0;
  if (packet.meta) {
    metaBytes = Buffer.byteLength(metaText(packet.meta), 'utf8');
    if (metaBytes > MAX_META_BYTES)
      throw new RangeError(`meta is ${metaBytes} bytes; at most ${MAX_META_BYTES}`);
    metaBytes += 4;
  }
  return FIXED_BYTES + sourceBytes + connectorIdBytes + deviceKeyBytes + metaBytes + packet.payload.length;
}

/**
 * Writes the record at `offset` and returns its end. `target` must have room for
 * `encodedRecordSize(packet)` bytes from `offset` (the caller computed the size already, so the
 * strings' lengths come from `write` instead of a second `byteLength`).
 */
export function encodeRecordInto(
  target: Buffer,
  offset: number,
  seq: number,
  packet: IncomingPacket,
): number {
  const seqHigh = Math.floor(seq / TWO_POW_32);
  target.writeUInt32LE(packet.meta ? (seqHigh | META_FLAG) >>> 0 : seqHigh, offset + 8);
  target.writeUInt32LE(seq % TWO_POW_32, offset + 12);
  target.writeDoubleLE(packet.receivedAt.getTime(), offset + 16);
  let at = offset + 24;
  const sourceBytes = target.write(packet.source, at + 1, 'utf8');
  target.writeUInt8(sourceBytes, at);
  at += 1 + sourceBytes;
  const connectorIdBytes = target.write(packet.connectorId, at + 1, 'utf8');
  target.writeUInt8(connectorIdBytes, at);
  at += 1 + connectorIdBytes;
  const deviceKeyBytes = target.write(packet.deviceKey, at + 2, 'utf8');
  target.writeUInt16LE(deviceKeyBytes, at);
  at += 2 + deviceKeyBytes;
  if (packet.meta) {
    const metaBytes = target.write(metaText(packet.meta), at + 4, 'utf8');
    target.writeUInt32LE(metaBytes, at);
    at += 4 + metaBytes;
  }
  at += packet.payload.copy(target, at);
  target.writeUInt32LE(at - offset - 4, offset);
  target.writeUInt32LE(crc32(target.subarray(offset + CRC_FROM, at)), offset + 4);
  return at;
}

export function encodeRecord(seq: number, packet: IncomingPacket): Buffer {
  const record = Buffer.allocUnsafe(encodedRecordSize(packet));
  encodeRecordInto(record, 0, seq, packet);
  return record;
}

/**
 * The end of the well-formed, crc-valid record starting at `offset`, or -1 when there is none
 * (incomplete, damaged or malformed).
 */
export function validRecordEnd(bytes: Buffer, offset: number): number {
  if (bytes.length - offset < FIXED_BYTES) return -1;
  const end = offset + 4 + bytes.readUInt32LE(offset);
  if (end - offset < FIXED_BYTES || end > bytes.length) return -1;
  if (crc32(bytes.subarray(offset + CRC_FROM, end)) !== bytes.readUInt32LE(offset + 4)) return -1;
  const seqHigh = bytes.readUInt32LE(offset + 8);
  if ((seqHigh & ~META_FLAG) >>> 0 > MAX_SEQ_HIGH) return -1;
  // A crc-valid record whose length fields overrun it was written by something else: reject it too.
  let at = offset + 24;
  at += 1 + bytes[at]!;
  if (at >= end) return -1;
  at += 1 + bytes[at]!;
  if (at + 2 > end) return -1;
  at += 2 + bytes.readUInt16LE(at);
  if (seqHigh & META_FLAG) {
    if (at + 4 > end) return -1;
    at += 4 + bytes.readUInt32LE(at);
  }
  return at > end ? -1 : end;
}

const seqHighAt = (view: Buffer, offset: number) => (view.readUInt32LE(offset + 8) & ~META_FLAG) >>> 0;

/** The seq of the record at `offset`, which must be a valid record (see `validRecordEnd`). */
export function recordSeqAt(bytes: Uint8Array, offset: number): number {
  const view = asBuffer(bytes);
  return seqHighAt(view, offset) * TWO_POW_32 + view.readUInt32LE(offset + 12);
}

/** Decodes records from offset 0 up to the end or the first bad record. Payloads are views on `bytes`. */
export function decodeRecords(bytes: Uint8Array): DecodedRecords {
  const view = asBuffer(bytes);
  const records: SpoolRecord[] = [];
  let offset = 0;
  while (offset < view.length) {
    const end = validRecordEnd(view, offset);
    if (end < 0) return { records, validEnd: offset, torn: true };
    records.push(decodeValidRecord(view, offset, end));
    offset = end;
  }
  return { records, validEnd: offset, torn: false };
}

function decodeValidRecord(view: Buffer, offset: number, end: number): SpoolRecord {
  const hasMeta = (view.readUInt32LE(offset + 8) & META_FLAG) !== 0;
  const seq = seqHighAt(view, offset) * TWO_POW_32 + view.readUInt32LE(offset + 12);
  const receivedAt = new Date(view.readDoubleLE(offset + 16));
  let at = offset + 24;
  const sourceEnd = at + 1 + view[at]!;
  const source = view.toString('utf8', at + 1, sourceEnd);
  at = sourceEnd;
  const connectorIdEnd = at + 1 + view[at]!;
  const connectorId = view.toString('utf8', at + 1, connectorIdEnd);
  at = connectorIdEnd;
  const deviceKeyEnd = at + 2 + view.readUInt16LE(at);
  const deviceKey = view.toString('utf8', at + 2, deviceKeyEnd);
  const record: SpoolRecord = {
    seq,
    connectorId,
    deviceKey,
    payload: view.subarray(deviceKeyEnd, end),
    source,
    receivedAt,
  };
  if (hasMeta) {
    const metaEnd = deviceKeyEnd + 4 + view.readUInt32LE(deviceKeyEnd);
    const meta = parseMeta(view.toString('utf8', deviceKeyEnd + 4, metaEnd));
    if (meta) record.meta = meta;
    record.payload = view.subarray(metaEnd, end);
  }
  return record;
}

/** Crc-valid metadata that is not a JSON object (never written so) is dropped, not the packet. */
function parseMeta(text: string): PacketMeta | undefined {
  let meta: unknown;
  try {
    meta = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return undefined;
  // The packet store's INSERT sends this text again rather than stringifying the object.
  metaJson.set(meta, text);
  return meta;
}

/** A Buffer over the same memory (no copy), for its little-endian readers and utf8 decoding. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
