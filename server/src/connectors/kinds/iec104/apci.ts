/**
 * IEC 60870-5-104 APCI (IEC 60870-5-104, 5.1): every APDU starts with 0x68 and a length octet (the
 * octets after it, 4..253), followed by four control octets that make it an I-frame (numbered
 * information transfer), an S-frame (numbered supervisory: acknowledgement) or a U-frame
 * (unnumbered control: STARTDT, STOPDT, TESTFR). Sequence numbers are 15 bits.
 */

export const START = 0x68;
/** The largest APDU length octet: 253 (an APDU is at most 255 octets). */
export const MAX_LENGTH = 253;
/** Type id, VSQ, cause of transmission (2), common address (2): the smallest ASDU. */
export const ASDU_HEADER = 6;
export const SEQ_MODULO = 0x8000;

export type UFunction =
  'STARTDT_ACT' | 'STARTDT_CON' | 'STOPDT_ACT' | 'STOPDT_CON' | 'TESTFR_ACT' | 'TESTFR_CON';

const U_CODES: Record<UFunction, number> = {
  STARTDT_ACT: 0x07,
  STARTDT_CON: 0x0b,
  STOPDT_ACT: 0x13,
  STOPDT_CON: 0x23,
  TESTFR_ACT: 0x43,
  TESTFR_CON: 0x83,
};
const U_BY_CODE = new Map(Object.entries(U_CODES).map(([fn, code]) => [code, fn as UFunction]));

export type Apdu =
  | { format: 'I'; send: number; recv: number; asdu: Buffer }
  | { format: 'S'; recv: number }
  | { format: 'U'; fn: UFunction };

/**
 * A frame or ASDU that breaks the standard's formats. The only error the decoders throw: the
 * message says what was wrong in words a tenant may read in the connector log.
 */
export class Iec104FrameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Iec104FrameError';
  }
}

/** One whole APDU (start octet included) into its format and fields. */
export function decodeApdu(frame: Buffer): Apdu {
  if (frame.length < 6 || frame[0] !== START)
    throw new Iec104FrameError('APDU does not start with 0x68 and a 4-octet control field');
  const length = frame[1]!;
  if (length !== frame.length - 2)
    throw new Iec104FrameError(`APDU length octet says ${length}, the frame has ${frame.length - 2}`);
  const c1 = frame[2]!;
  if ((c1 & 0x01) === 0) {
    if (length < 4 + ASDU_HEADER)
      throw new Iec104FrameError(`I-frame of length ${length} is too short for an ASDU`);
    return {
      format: 'I',
      send: frame.readUInt16LE(2) >> 1,
      recv: frame.readUInt16LE(4) >> 1,
      asdu: frame.subarray(6),
    };
  }
  if (length !== 4) throw new Iec104FrameError(`S- or U-frame with length ${length} (must be 4)`);
  if ((c1 & 0x03) === 0x01) return { format: 'S', recv: frame.readUInt16LE(4) >> 1 };
  const fn = U_BY_CODE.get(c1);
  if (!fn || frame[3] !== 0 || frame[4] !== 0 || frame[5] !== 0)
    throw new Iec104FrameError(`U-frame with control field 0x${frame.subarray(2, 6).toString('hex')}`);
  return { format: 'U', fn };
}

const header = (length: number) => Buffer.from([START, length]);

export function encodeI(send: number, recv: number, asdu: Buffer): Buffer {
  if (asdu.length < ASDU_HEADER || asdu.length > MAX_LENGTH - 4)
    throw new Iec104FrameError(`an ASDU of ${asdu.length} octets does not fit an APDU`);
  const control = Buffer.alloc(4);
  control.writeUInt16LE((send % SEQ_MODULO) << 1, 0);
  control.writeUInt16LE((recv % SEQ_MODULO) << 1, 2);
  return Buffer.concat([header(4 + asdu.length), control, asdu]);
}

export function encodeS(recv: number): Buffer {
  const frame = Buffer.from([START, 4, 0x01, 0x00, 0, 0]);
  frame.writeUInt16LE((recv % SEQ_MODULO) << 1, 4);
  return frame;
}

export function encodeU(fn: UFunction): Buffer {
  return Buffer.from([START, 4, U_CODES[fn], 0, 0, 0]);
}

/**
 * Cuts a TCP byte stream into APDUs. A wrong start octet or a length octet below 4 or above 253
 * leaves no way to find the next frame: it throws, and the link is closed and opened again
 * (IEC 60870-5-104, 5.1: the connection is closed on a framing error).
 */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    const frames: Buffer[] = [];
    while (this.buffered.length >= 2) {
      if (this.buffered[0] !== START)
        throw new Iec104FrameError(`expected start octet 0x68, got 0x${this.buffered[0]!.toString(16)}`);
      const length = this.buffered[1]!;
      if (length < 4 || length > MAX_LENGTH)
        throw new Iec104FrameError(`APDU length octet ${length} is outside 4..${MAX_LENGTH}`);
      if (this.buffered.length < length + 2) break;
      frames.push(Buffer.from(this.buffered.subarray(0, length + 2)));
      this.buffered = this.buffered.subarray(length + 2);
    }
    return frames;
  }
}

/** How many of our I-frames `recv` acknowledges, given the oldest unacknowledged and the next send number. */
export function acknowledged(recv: number, oldest: number, next: number): number | undefined {
  const outstanding = (next - oldest + SEQ_MODULO) % SEQ_MODULO;
  const count = (recv - oldest + SEQ_MODULO) % SEQ_MODULO;
  return count <= outstanding ? count : undefined;
}
