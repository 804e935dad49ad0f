/**
 * Cheap looks at the raw MQTT byte stream, without decoding packets: which protocol version the
 * CONNECT asks for (to route MQTT 5 through the bridge), and whether a packet is larger than allowed
 * (checked at its fixed header, before its body is buffered).
 */

/** Reads the remaining-length varint at `offset`: value and byte count, undefined when incomplete, null when malformed. */
export function remainingLength(
  buf: Buffer,
  offset: number,
): { value: number; bytes: number } | undefined | null {
  let value = 0;
  let multiplier = 1;
  for (let i = 0; i < 4; i++) {
    if (offset + i >= buf.length) return undefined;
    const byte = buf[offset + i]!;
    value += (byte & 0x7f) * multiplier;
    if ((byte & 0x80) === 0) return { value, bytes: i + 1 };
    multiplier *= 128;
  }
  return null;
}

/**
 * The protocol level of the CONNECT packet at the start of `buf` (3 = 3.1, 4 = 3.1.1, 5 = 5.0);
 * undefined while more bytes are needed; null when the stream does not start with a CONNECT.
 */
export function connectProtocolVersion(buf: Buffer): number | undefined | null {
  if (buf.length === 0) return undefined;
  if (buf[0] !== 0x10) return null;
  const length = remainingLength(buf, 1);
  if (length === null) return null;
  if (length === undefined) return undefined;
  const start = 1 + length.bytes;
  if (buf.length < start + 2) return undefined;
  const nameLength = buf.readUInt16BE(start);
  if (nameLength > 6) return null;
  const versionAt = start + 2 + nameLength;
  if (buf.length <= versionAt) return undefined;
  // Bridge mode sets the high bit; the level is the rest.
  return buf[versionAt]! & 0x7f;
}

/** Follows packet boundaries across chunks; refuses a packet whose total size exceeds `maxBytes`. */
export class FrameSizeGuard {
  /** Body bytes of the current packet still to pass. */
  private skip = 0;
  /** -1: the next byte is a fixed header; 0–3: reading the remaining-length varint. */
  private lengthBytes = -1;
  private length = 0;
  private multiplier = 1;

  constructor(private readonly maxBytes: number) {}

  /** false as soon as a packet in `chunk` is too large or its length is malformed. */
  feed(chunk: Buffer): boolean {
    let i = 0;
    while (i < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - i);
        this.skip -= n;
        i += n;
        continue;
      }
      if (this.lengthBytes < 0) {
        i++;
        this.lengthBytes = 0;
        this.length = 0;
        this.multiplier = 1;
        continue;
      }
      const byte = chunk[i++]!;
      this.length += (byte & 0x7f) * this.multiplier;
      this.multiplier *= 128;
      this.lengthBytes++;
      if (byte & 0x80) {
        if (this.lengthBytes >= 4) return false;
        continue;
      }
      if (1 + this.lengthBytes + this.length > this.maxBytes) return false;
      this.skip = this.length;
      this.lengthBytes = -1;
    }
    return true;
  }
}
