import type { WebhookItem } from '../connector-kind.js';

/**
 * What crosses between OPC UA and Stellwerk, without a session: a monitored item's value into a
 * packet (payload for the JSON parser, `_meta` fields), and a downlink's bytes into a write.
 * Kept free of sockets so it can be unit- and fuzz-tested.
 */

/** A node id mapped to a state of a device on the connector (the kind's `nodes` setting). */
export interface NodeMapping {
  nodeId: string;
  deviceId: string;
  state: string;
}

/** One notification of a monitored item, as node-opcua's DataValue carries it. */
export interface Sample {
  value: unknown;
  /** The status code's name: `Good`, `UncertainLastUsableValue`, `BadSensorFailure`, … */
  status: string;
  sourceTimestamp: Date | null;
}

/** A downlink's bytes or a value that cannot be used, with why; the only error this module throws. */
export class OpcuaValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OpcuaValueError';
  }
}

const MAX_STRING = 10_000;
const MAX_ARRAY = 1000;

/**
 * A variant's value as JSON: numbers, booleans and strings as they are (64-bit integers arrive here
 * already made numbers by `int64`); dates as ISO text; byte strings as base64; localized text as its text;
 * arrays element-wise (at most 1000); anything else (structures) as its text. Never throws.
 */
export function jsonValue(value: unknown, depth = 0): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') return value.slice(0, MAX_STRING);
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Buffer.isBuffer(value)) return value.subarray(0, MAX_STRING).toString('base64');
  if (ArrayBuffer.isView(value) || Array.isArray(value)) {
    const items = Array.from(value as unknown as ArrayLike<unknown>).slice(0, MAX_ARRAY);
    return depth > 2 ? null : items.map((item) => jsonValue(item, depth + 1));
  }
  if (typeof value === 'object' && 'text' in value) {
    const text = value.text;
    return typeof text === 'string' ? text.slice(0, MAX_STRING) : null;
  }
  try {
    // Structures (extension objects) describe themselves in their toString.
    // eslint-disable-next-line @typescript-eslint/no-base-to-string
    return String(value).slice(0, MAX_STRING);
  } catch {
    return null;
  }
}

/** node-opcua's `[high, low]` of an Int64/UInt64 as a number (exact up to 2^53). */
export function int64(value: unknown, signed: boolean): number | null {
  if (!Array.isArray(value) || value.length !== 2) return null;
  const [high, low] = value as unknown[];
  if (typeof high !== 'number' || typeof low !== 'number') return null;
  const hi = signed ? high | 0 : high >>> 0;
  return hi * 0x1_0000_0000 + (low >>> 0);
}

/**
 * One sample of a mapped node as a packet: `{ "<state>": value }` for the JSON parser and the
 * node id, status code and source timestamp as `_meta` fields. A Bad sample carries no value (the
 * state keeps its last good one) but still arrives, so its status code is kept, never dropped.
 */
export function samplePacket(mapping: NodeMapping, sample: Sample): WebhookItem {
  const good = !sample.status.startsWith('Bad');
  const payload = good ? { [mapping.state]: jsonValue(sample.value) } : {};
  const fields: Record<string, string> = { nodeId: mapping.nodeId, statusCode: sample.status };
  const time = sample.sourceTimestamp;
  if (time && !Number.isNaN(time.getTime())) fields.sourceTimestamp = time.toISOString();
  return { deviceKey: mapping.deviceId, payload: Buffer.from(JSON.stringify(payload)), meta: { fields } };
}

/** Built-in data types a write may name (OPC UA Part 6, 5.1.2), with what their value must be. */
const WRITE_TYPES = {
  Boolean: (v: unknown) => typeof v === 'boolean',
  SByte: (v: unknown) => isInt(v, -128, 127),
  Byte: (v: unknown) => isInt(v, 0, 255),
  Int16: (v: unknown) => isInt(v, -32768, 32767),
  UInt16: (v: unknown) => isInt(v, 0, 65535),
  Int32: (v: unknown) => isInt(v, -2147483648, 2147483647),
  UInt32: (v: unknown) => isInt(v, 0, 4294967295),
  Float: (v: unknown) => typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= 3.4028234663852886e38,
  Double: (v: unknown) => typeof v === 'number' && Number.isFinite(v),
  String: (v: unknown) => typeof v === 'string' && v.length <= MAX_STRING,
  DateTime: (v: unknown) => typeof v === 'string' && !Number.isNaN(Date.parse(v)),
} as const;
export type WriteType = keyof typeof WRITE_TYPES;
export const WRITE_TYPE_NAMES = Object.keys(WRITE_TYPES) as WriteType[];

const isInt = (v: unknown, min: number, max: number) =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/** A write a downlink asks for. `dataType` absent: the node's own data type is read first. */
export interface WriteCommand {
  nodeId: string;
  value: boolean | number | string;
  dataType?: WriteType;
}

const NODE_ID = /^(?:ns=\d{1,5};)?[isgb]=.+$/s;

/**
 * A downlink's bytes as a write: `{"nodeId":"ns=1;s=Setpoint","value":42,"dataType":"Double"}`.
 * Throws OpcuaValueError saying what is wrong with them.
 */
export function parseWriteCommand(bytes: Buffer): WriteCommand {
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new OpcuaValueError(
      'An OPC UA write is a JSON object {"nodeId", "value", "dataType"}; this is not JSON',
    );
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new OpcuaValueError('An OPC UA write is a JSON object {"nodeId", "value", "dataType"}');
  const { nodeId, value, dataType } = doc as Record<string, unknown>;
  if (typeof nodeId !== 'string' || nodeId.length > 500 || !NODE_ID.test(nodeId))
    throw new OpcuaValueError('"nodeId" must be an OPC UA node id such as "ns=1;s=Setpoint" or "i=2258"');
  if (typeof value !== 'boolean' && typeof value !== 'number' && typeof value !== 'string')
    throw new OpcuaValueError('"value" must be a boolean, a number or a string');
  if (dataType === undefined) return { nodeId, value };
  if (typeof dataType !== 'string' || !(WRITE_TYPE_NAMES as string[]).includes(dataType))
    throw new OpcuaValueError(`"dataType" must be one of ${WRITE_TYPE_NAMES.join(', ')}`);
  if (!WRITE_TYPES[dataType as WriteType](value))
    throw new OpcuaValueError(`${JSON.stringify(value).slice(0, 100)} is not a valid ${dataType}`);
  return { nodeId, value, dataType: dataType as WriteType };
}

/** Checks a value against the node's own data type, read from the server (a write without `dataType`). */
export function checkWriteValue(dataType: string, value: unknown): WriteType {
  if (!(WRITE_TYPE_NAMES as string[]).includes(dataType))
    throw new OpcuaValueError(`Writing a node of data type ${dataType} is not supported`);
  if (!WRITE_TYPES[dataType as WriteType](value))
    throw new OpcuaValueError(`${JSON.stringify(value).slice(0, 100)} is not a valid ${dataType}`);
  return dataType as WriteType;
}
