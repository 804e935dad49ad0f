import { crc32 } from 'node:zlib';
import type { IncomingPacket } from '../ingest.types.js';

/**
 * One spooled packet on disk, little endian:
 * `u32 length` (bytes after this field) · `u32 crc32` (of the bytes after the crc field) ·
 * `u32 seqHigh` · `u32 seqLow` · `f64 receivedAt` (epoch ms) · `u8` + source · `u8` + connectorId ·
 * `u16` + deviceKey (all utf8) · payload (the rest).
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
  return FIXED_BYTES + sourceBytes + connectorIdBytes + deviceKeyBytes + packet.payload.length;
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
  target.writeUInt32LE(Math.floor(seq / TWO_POW_32), offset + 8);
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
  if (bytes.readUInt32LE(offset + 8) > MAX_SEQ_HIGH) return -1;
  // A crc-valid record whose length fields overrun it was written by something else: reject it too.
  let at = offset + 24;
  at += 1 + bytes[at]!;
  if (at >= end) return -1;
  at += 1 + bytes[at]!;
  if (at + 2 > end) return -1;
  at += 2 + bytes.readUInt16LE(at);
  return at > end ? -1 : end;
}

/** The seq of the record at `offset`, which must be a valid record (see `validRecordEnd`). */
export function recordSeqAt(bytes: Uint8Array, offset: number): number {
  const view = asBuffer(bytes);
  return view.readUInt32LE(offset + 8) * TWO_POW_32 + view.readUInt32LE(offset + 12);
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
  const seq = view.readUInt32LE(offset + 8) * TWO_POW_32 + view.readUInt32LE(offset + 12);
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
  return { seq, connectorId, deviceKey, payload: view.subarray(deviceKeyEnd, end), source, receivedAt };
}

/** A Buffer over the same memory (no copy), for its little-endian readers and utf8 decoding. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
