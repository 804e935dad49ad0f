import { errors } from '../../platform/errors.js';

/**
 * OMA LwM2M TLV (Content-Format 11542, LwM2M 1.1 TS Core 7.4.3). TLV carries no value types: they
 * come from the object model. This server keeps a small table of the resources most devices
 * report (Device, Server, Connectivity, Location and the IPSO sensor and actuator resources) and
 * guesses for the rest (printable text → string, 1/2/4/8 bytes → signed integer, else hex). SenML
 * carries its types and is the format to prefer.
 */

type ValueType = 'string' | 'integer' | 'float' | 'boolean' | 'time' | 'objlnk' | 'opaque';

const OBJECT_RESOURCES: Record<string, ValueType> = {
  // 3 Device
  '3/0': 'string',
  '3/1': 'string',
  '3/2': 'string',
  '3/3': 'string',
  '3/6': 'integer',
  '3/7': 'integer',
  '3/8': 'integer',
  '3/9': 'integer',
  '3/10': 'integer',
  '3/11': 'integer',
  '3/13': 'time',
  '3/14': 'string',
  '3/15': 'string',
  '3/16': 'string',
  '3/17': 'string',
  '3/18': 'string',
  '3/19': 'string',
  '3/20': 'integer',
  '3/21': 'integer',
  // 1 LwM2M Server
  '1/0': 'integer',
  '1/1': 'integer',
  '1/2': 'integer',
  '1/3': 'integer',
  '1/6': 'boolean',
  '1/7': 'string',
  // 4 Connectivity Monitoring
  '4/0': 'integer',
  '4/1': 'integer',
  '4/2': 'integer',
  '4/3': 'integer',
  '4/4': 'string',
  '4/5': 'string',
  '4/7': 'string',
  '4/8': 'integer',
  '4/9': 'integer',
  '4/10': 'integer',
  // 6 Location
  '6/0': 'float',
  '6/1': 'float',
  '6/2': 'float',
  '6/3': 'float',
  '6/4': 'opaque',
  '6/5': 'time',
  '6/6': 'float',
};

/** IPSO reusable resources keep their meaning in every object that uses them. */
const IPSO_RESOURCES: Record<number, ValueType> = {
  5500: 'boolean',
  5501: 'integer',
  5601: 'float',
  5602: 'float',
  5603: 'float',
  5604: 'float',
  5700: 'float',
  5701: 'string',
  5702: 'float',
  5703: 'float',
  5704: 'float',
  5750: 'string',
  5800: 'float',
  5805: 'float',
  5820: 'float',
  5821: 'float',
  5850: 'boolean',
  5851: 'integer',
};

const invalid = (message: string) => errors.unprocessable('INVALID_PAYLOAD', `TLV: ${message}`);

const OBJECT_INSTANCE = 0;
const RESOURCE_INSTANCE = 1;
const MULTIPLE_RESOURCE = 2;
const RESOURCE = 3;
const MAX_ENTRIES = 2000;

interface Entry {
  kind: number;
  id: number;
  value: Buffer;
}

/** The entries of one TLV sequence. */
function entries(bytes: Buffer): Entry[] {
  const out: Entry[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (out.length >= MAX_ENTRIES) throw invalid(`more than ${MAX_ENTRIES} entries`);
    const type = bytes[at]!;
    const idLength = type & 0x20 ? 2 : 1;
    const lengthType = (type >> 3) & 0x03;
    const header = 1 + idLength + lengthType;
    if (at + header > bytes.length) throw invalid('a header runs past the end');
    const id = idLength === 2 ? bytes.readUInt16BE(at + 1) : bytes[at + 1]!;
    let length = type & 0x07;
    if (lengthType > 0) length = bytes.readUIntBE(at + 1 + idLength, lengthType);
    if (at + header + length > bytes.length) throw invalid(`entry ${id} is longer than the payload`);
    out.push({ kind: type >> 6, id, value: bytes.subarray(at + header, at + header + length) });
    at += header + length;
  }
  return out;
}

function typeOf(path: string): ValueType | undefined {
  const [object, , resource] = path.split('/');
  return OBJECT_RESOURCES[`${object}/${resource}`] ?? IPSO_RESOURCES[Number(resource)];
}

function integer(value: Buffer): number | string {
  if (value.length === 1) return value.readInt8(0);
  if (value.length === 2) return value.readInt16BE(0);
  if (value.length === 4) return value.readInt32BE(0);
  if (value.length === 8) {
    const big = value.readBigInt64BE(0);
    return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(big)
      : big.toString();
  }
  throw invalid(`an integer of ${value.length} bytes`);
}

const printable = (value: Buffer) => value.length > 0 && value.every((b) => b >= 0x20 && b < 0x7f);

function decodeValue(path: string, value: Buffer): string | number | boolean {
  switch (typeOf(path)) {
    case 'string':
      return value.toString('utf8');
    case 'integer':
    case 'time':
      return integer(value);
    case 'float':
      // float32 carries about 7 significant digits: 21.3 stays 21.3, not 21.299999237060547.
      if (value.length === 4) return Number(value.readFloatBE(0).toPrecision(7));
      if (value.length === 8) return value.readDoubleBE(0);
      throw invalid(`a float of ${value.length} bytes at ${path}`);
    case 'boolean':
      if (value.length === 1 && value[0]! <= 1) return value[0] === 1;
      throw invalid(`a boolean at ${path} must be one byte 0 or 1`);
    case 'objlnk':
      if (value.length !== 4) throw invalid(`an object link at ${path} must be 4 bytes`);
      return `${value.readUInt16BE(0)}:${value.readUInt16BE(2)}`;
    case 'opaque':
      return value.toString('hex');
    default:
      if (printable(value) && value.length >= 2) return value.toString('utf8');
      if ([1, 2, 4, 8].includes(value.length)) return integer(value);
      return printable(value) ? value.toString('utf8') : value.toString('hex');
  }
}

/**
 * The values of a TLV payload as `[path, value]`. `requested` is the path that was read or
 * observed; it gives the object (and instance) the entries are relative to.
 */
export function decodeTlv(payload: Buffer, requested: string): Array<[string, string | number | boolean]> {
  const parts = requested === '' ? [] : requested.split('/');
  const out: Array<[string, string | number | boolean]> = [];
  const walk = (bytes: Buffer, base: string[], depth: number) => {
    // Object instance → multiple resource → resource instance is as deep as TLV goes.
    if (depth > 2) throw invalid('entries nested deeper than an object instance allows');
    for (const entry of entries(bytes)) {
      if (entry.kind === OBJECT_INSTANCE) {
        if (base.length < 1 || depth > 0) throw invalid('an object instance where none can be');
        walk(entry.value, [base[0]!, String(entry.id)], depth + 1);
      } else if (entry.kind === MULTIPLE_RESOURCE) {
        if (base.length < 2) throw invalid('a resource outside an object instance');
        walk(entry.value, [base[0]!, base[1]!, String(entry.id)], depth + 1);
      } else if (entry.kind === RESOURCE) {
        if (base.length < 2) throw invalid('a resource outside an object instance');
        const path = `${base[0]}/${base[1]}/${entry.id}`;
        out.push([path, decodeValue(path, entry.value)]);
      } else if (entry.kind === RESOURCE_INSTANCE) {
        if (base.length < 3) throw invalid('a resource instance outside a resource');
        const resource = `${base[0]}/${base[1]}/${base[2]}`;
        out.push([`${resource}/${entry.id}`, decodeValue(resource, entry.value)]);
      }
    }
  };
  walk(payload, parts, 0);
  return out;
}
