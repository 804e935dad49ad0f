import { ASDU_HEADER, Iec104FrameError } from './apci.js';

/**
 * IEC 60870-5-101/104 ASDUs as this client reads and writes them, with the 104 field sizes:
 * cause of transmission 2 octets (cause, test and P/N bits; originator address), common address
 * 2 octets, information object address 3 octets.
 */

export type Family = 'single' | 'double' | 'normalized' | 'scaled' | 'float' | 'total';

interface MonitoringType {
  family: Family;
  name: string;
  /** Octets of one element without its address and time tag. */
  size: number;
  timed: boolean;
}

export const MONITORING_TYPES: ReadonlyMap<number, MonitoringType> = new Map([
  [1, { family: 'single', name: 'M_SP_NA_1', size: 1, timed: false }],
  [3, { family: 'double', name: 'M_DP_NA_1', size: 1, timed: false }],
  [9, { family: 'normalized', name: 'M_ME_NA_1', size: 3, timed: false }],
  [11, { family: 'scaled', name: 'M_ME_NB_1', size: 3, timed: false }],
  [13, { family: 'float', name: 'M_ME_NC_1', size: 5, timed: false }],
  [15, { family: 'total', name: 'M_IT_NA_1', size: 5, timed: false }],
  [30, { family: 'single', name: 'M_SP_TB_1', size: 1, timed: true }],
  [31, { family: 'double', name: 'M_DP_TB_1', size: 1, timed: true }],
  [34, { family: 'normalized', name: 'M_ME_TD_1', size: 3, timed: true }],
  [35, { family: 'scaled', name: 'M_ME_TE_1', size: 3, timed: true }],
  [36, { family: 'float', name: 'M_ME_TF_1', size: 5, timed: true }],
  [37, { family: 'total', name: 'M_IT_TB_1', size: 5, timed: true }],
]);

export const C_SC_NA_1 = 45;
export const C_DC_NA_1 = 46;
export const C_IC_NA_1 = 100;
export const C_CS_NA_1 = 103;
/** Octets after the address of the control-direction types this client sends (and sees mirrored). */
const COMMAND_SIZES = new Map([
  [C_SC_NA_1, 1],
  [C_DC_NA_1, 1],
  [C_IC_NA_1, 1],
  [C_CS_NA_1, 7],
]);

export const COT = {
  periodic: 1,
  spontaneous: 3,
  activation: 6,
  activationCon: 7,
  activationTerm: 10,
  interrogated: 20,
} as const;

export const DOUBLE_STATES = ['intermediate', 'off', 'on', 'indeterminate'] as const;
export type DoubleState = (typeof DOUBLE_STATES)[number];

/** Quality flags as `_meta` fields: QDS/SIQ/DIQ (IV, NT, SB, BL, OV) or, for totals, BCR's. */
export type Quality = Record<string, boolean | number>;

export interface InfoObject {
  ioa: number;
  value: boolean | number | DoubleState;
  quality: Quality;
  /** The CP56Time2a tag, when the type has one and its fields are in range. */
  time?: Date;
  /** The tag's IV bit. */
  timeInvalid?: boolean;
}

export interface AsduHeader {
  typeId: number;
  sq: boolean;
  count: number;
  cot: number;
  negative: boolean;
  test: boolean;
  originator: number;
  ca: number;
}

export type Asdu =
  | (AsduHeader & { kind: 'monitoring'; family: Family; typeName: string; objects: InfoObject[] })
  /** A mirrored command (ACTCON, ACTTERM, negative confirmations) with the address it names. */
  | (AsduHeader & { kind: 'command'; ioa: number; qualifier: number })
  | (AsduHeader & { kind: 'unknown' });

export function decodeAsduHeader(asdu: Buffer): AsduHeader {
  if (asdu.length < ASDU_HEADER) throw new Iec104FrameError(`ASDU of ${asdu.length} octets has no header`);
  const vsq = asdu[1]!;
  const cotOctet = asdu[2]!;
  return {
    typeId: asdu[0]!,
    sq: (vsq & 0x80) !== 0,
    count: vsq & 0x7f,
    cot: cotOctet & 0x3f,
    negative: (cotOctet & 0x40) !== 0,
    test: (cotOctet & 0x80) !== 0,
    originator: asdu[3]!,
    ca: asdu.readUInt16LE(4),
  };
}

const ioaAt = (asdu: Buffer, at: number) => asdu.readUIntLE(at, 3);

/** One ASDU into its objects; throws Iec104FrameError when its length does not fit its type and count. */
export function decodeAsdu(asdu: Buffer): Asdu {
  const head = decodeAsduHeader(asdu);
  const type = MONITORING_TYPES.get(head.typeId);
  const body = asdu.length - ASDU_HEADER;
  if (!type) {
    const size = COMMAND_SIZES.get(head.typeId);
    if (size === undefined) return { ...head, kind: 'unknown' };
    expectLength(head, body, 3 + size);
    return { ...head, kind: 'command', ioa: ioaAt(asdu, ASDU_HEADER), qualifier: asdu[ASDU_HEADER + 3]! };
  }
  if (head.count === 0) throw new Iec104FrameError(`ASDU type ${head.typeId} with no information objects`);
  const element = type.size + (type.timed ? 7 : 0);
  expectLength(head, body, head.sq ? 3 + head.count * element : head.count * (3 + element));
  const objects: InfoObject[] = [];
  let at = ASDU_HEADER;
  const first = ioaAt(asdu, at);
  if (head.sq) at += 3;
  for (let i = 0; i < head.count; i++) {
    let ioa = first + i;
    if (!head.sq) {
      ioa = ioaAt(asdu, at);
      at += 3;
    }
    const object = decodeElement(type.family, asdu, at, ioa);
    at += type.size;
    if (type.timed) {
      const tag = decodeCp56(asdu.subarray(at, at + 7));
      if (tag.time) object.time = tag.time;
      object.timeInvalid = tag.invalid;
      at += 7;
    }
    objects.push(object);
  }
  return { ...head, kind: 'monitoring', family: type.family, typeName: type.name, objects };
}

function expectLength(head: AsduHeader, body: number, expected: number): void {
  if (body !== expected)
    throw new Iec104FrameError(
      `ASDU type ${head.typeId} with ${head.count} object(s)${head.sq ? ' (SQ=1)' : ''} needs ${expected} octets after its header, has ${body}`,
    );
}

/** QDS (IEC 60870-5-101, 7.2.6.3): OV, BL, SB, NT, IV. */
const qds = (octet: number): Quality => ({
  iv: (octet & 0x80) !== 0,
  nt: (octet & 0x40) !== 0,
  sb: (octet & 0x20) !== 0,
  bl: (octet & 0x10) !== 0,
  ov: (octet & 0x01) !== 0,
});

/** SIQ/DIQ: like QDS without OV. */
const siq = (octet: number): Quality => {
  const { ov: _ov, ...rest } = qds(octet);
  return rest;
};

function decodeElement(family: Family, asdu: Buffer, at: number, ioa: number): InfoObject {
  switch (family) {
    case 'single':
      return { ioa, value: (asdu[at]! & 0x01) !== 0, quality: siq(asdu[at]!) };
    case 'double':
      return { ioa, value: DOUBLE_STATES[asdu[at]! & 0x03]!, quality: siq(asdu[at]!) };
    case 'normalized':
      return { ioa, value: asdu.readInt16LE(at) / 32768, quality: qds(asdu[at + 2]!) };
    case 'scaled':
      return { ioa, value: asdu.readInt16LE(at), quality: qds(asdu[at + 2]!) };
    case 'float': {
      const value = asdu.readFloatLE(at);
      // NaN and infinities have no JSON form: kept as invalid rather than stored as null.
      const finite = Number.isFinite(value);
      return {
        ioa,
        value: finite ? value : 0,
        quality: { ...qds(asdu[at + 4]!), ...(finite ? {} : { iv: true }) },
      };
    }
    case 'total': {
      const flags = asdu[at + 4]!;
      return {
        ioa,
        value: asdu.readInt32LE(at),
        quality: {
          iv: (flags & 0x80) !== 0,
          carry: (flags & 0x20) !== 0,
          adjusted: (flags & 0x40) !== 0,
          counterSeq: flags & 0x1f,
        },
      };
    }
  }
}

/**
 * CP56Time2a (IEC 60870-5-101, 7.2.6.18), read as UTC: milliseconds (2 octets), minutes with IV,
 * hours with SU, day of month with day of week, month, year since 2000. A tag whose fields are out
 * of range has no time.
 */
export function decodeCp56(tag: Buffer): { time?: Date; invalid: boolean } {
  const ms = tag.readUInt16LE(0);
  const minute = tag[2]! & 0x3f;
  const hour = tag[3]! & 0x1f;
  const day = tag[4]! & 0x1f;
  const month = tag[5]! & 0x0f;
  const year = 2000 + (tag[6]! & 0x7f);
  const invalid = (tag[2]! & 0x80) !== 0;
  if (ms > 59_999 || minute > 59 || hour > 23 || day < 1 || month < 1 || month > 12) return { invalid };
  const time = new Date(Date.UTC(year, month - 1, day, hour, minute, 0, ms));
  if (time.getUTCDate() !== day) return { invalid };
  return { time, invalid };
}

export function encodeCp56(time: Date): Buffer {
  const tag = Buffer.alloc(7);
  tag.writeUInt16LE(time.getUTCSeconds() * 1000 + time.getUTCMilliseconds(), 0);
  tag[2] = time.getUTCMinutes();
  tag[3] = time.getUTCHours();
  tag[4] = time.getUTCDate() | ((((time.getUTCDay() + 6) % 7) + 1) << 5);
  tag[5] = time.getUTCMonth() + 1;
  tag[6] = time.getUTCFullYear() % 100;
  return tag;
}

export interface CommandAsdu {
  typeId: number;
  cot: number;
  originator: number;
  ca: number;
  ioa: number;
  /** The element after the address: QOI, SCO, DCO or a CP56Time2a tag. */
  element: Buffer;
}

/** One control-direction ASDU with a single object (SQ=0, count 1). */
export function encodeCommand(c: CommandAsdu): Buffer {
  const asdu = Buffer.alloc(ASDU_HEADER + 3 + c.element.length);
  asdu[0] = c.typeId;
  asdu[1] = 1;
  asdu[2] = c.cot;
  asdu[3] = c.originator;
  asdu.writeUInt16LE(c.ca, 4);
  asdu.writeUIntLE(c.ioa, 6, 3);
  c.element.copy(asdu, 9);
  return asdu;
}

/** SCO/DCO: the state in bits 0..1, S/E (select) in bit 7; qualifier of command 0 (no additional definition). */
export function commandElement(family: 'single' | 'double', on: boolean, select: boolean): Buffer {
  const state = family === 'single' ? (on ? 1 : 0) : on ? 2 : 1;
  return Buffer.from([state | (select ? 0x80 : 0)]);
}
