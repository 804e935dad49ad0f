import { ParseError, type ConfigProblem, type ParserPlugin } from '../parser.types.js';
import { integerProblem, problem } from '../../platform/http/problem-detail.js';
import { isPlainObject, setOwn } from './values.js';

/**
 * Binary layouts: each field reads a fixed-width value at a byte offset, big or little endian,
 * integers unsigned or two's-complement signed, then `value * scale + add`. Integers are put
 * together byte by byte here rather than with Node's Buffer readers, so the property test that
 * compares against those readers and writers checks real arithmetic.
 *
 * Config: `{ fields: [{ key, offset, type, endian?: 'big'|'little', scale?, add?, bit? }] }`.
 */

const WIDTHS = {
  uint8: 1,
  int8: 1,
  uint16: 2,
  int16: 2,
  uint24: 3,
  int24: 3,
  uint32: 4,
  int32: 4,
  float32: 4,
  float64: 8,
  bool: 1,
} as const;

export type FieldType = keyof typeof WIDTHS;
export const FIELD_TYPES = Object.keys(WIDTHS) as FieldType[];

export interface BinaryField {
  key: string;
  offset: number;
  type: FieldType;
  endian: 'big' | 'little';
  scale?: number;
  add?: number;
  /** For `bool`: test one bit (0 = least significant) instead of the whole byte. */
  bit?: number;
}

const MAX_FIELDS = 256;
const MAX_OFFSET = 65_535;
const MAX_KEY_LENGTH = 100;

export function validateLayout(config: Record<string, unknown>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const fields = config.fields;
  const fieldsMessage = 'fields must be a non-empty array of field layouts';
  if (!Array.isArray(fields)) return [problem('/fields', 'type', { type: 'array' }, fieldsMessage)];
  if (fields.length === 0) return [problem('/fields', 'minItems', { limit: 1 }, fieldsMessage)];
  if (fields.length > MAX_FIELDS) {
    return [
      problem('/fields', 'maxItems', { limit: MAX_FIELDS }, `at most ${MAX_FIELDS} fields are allowed`),
    ];
  }
  const seen = new Set<string>();
  fields.forEach((field: unknown, i) => {
    const path = (name: string) => `/fields/${i}${name}`;
    const add = (found: ConfigProblem | undefined) => found && problems.push(found);
    if (!isPlainObject(field))
      return add(problem(path(''), 'type', { type: 'object' }, 'a field must be an object'));
    const { key, offset, type, endian, scale, add: addend, bit } = field;
    if (typeof key !== 'string' || key.trim() === '')
      add(problem(path('/key'), 'required', {}, 'key is required'));
    else if (key.length > MAX_KEY_LENGTH)
      add(
        problem(
          path('/key'),
          'maxLength',
          { limit: MAX_KEY_LENGTH },
          `key is longer than ${MAX_KEY_LENGTH} characters`,
        ),
      );
    else if (seen.has(key)) add(problem(path('/key'), 'unique', { value: key }, `duplicate key "${key}"`));
    else seen.add(key);
    add(
      integerProblem(
        path('/offset'),
        offset,
        0,
        MAX_OFFSET,
        `offset must be an integer from 0 to ${MAX_OFFSET}`,
      ),
    );
    if (typeof type !== 'string' || !Object.hasOwn(WIDTHS, type)) {
      const message = `unknown type ${JSON.stringify(type)}; known: ${FIELD_TYPES.join(', ')}`;
      add(problem(path('/type'), 'enum', { allowedValues: FIELD_TYPES }, message));
    }
    if (endian !== undefined && endian !== 'big' && endian !== 'little') {
      add(
        problem(
          path('/endian'),
          'enum',
          { allowedValues: ['big', 'little'] },
          "endian must be 'big' or 'little'",
        ),
      );
    }
    for (const [name, v] of [
      ['scale', scale],
      ['add', addend],
    ] as const) {
      if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v)))
        add(problem(path(`/${name}`), 'type', { type: 'number' }, `${name} must be a number`));
    }
    if (bit !== undefined) {
      // Only a bool field has bits; no keyword says "not for this type", the message does.
      if (type !== 'bool') add({ path: path('/bit'), message: 'bit applies to bool fields only' });
      else add(integerProblem(path('/bit'), bit, 0, 7, 'bit must be an integer from 0 to 7'));
    }
  });
  return problems;
}

/** Reads an unsigned integer of `width` bytes, then applies two's complement when signed. */
export function readInteger(bytes: Buffer, offset: number, width: number, signed: boolean, little: boolean) {
  let value = 0;
  for (let i = 0; i < width; i++) {
    const byte = bytes[little ? offset + width - 1 - i : offset + i]!;
    value = value * 256 + byte;
  }
  const bits = width * 8;
  return signed && value >= 2 ** (bits - 1) ? value - 2 ** bits : value;
}

function readField(bytes: Buffer, field: BinaryField): number | boolean {
  const width = WIDTHS[field.type];
  if (field.offset + width > bytes.length) {
    throw new ParseError(
      `Field "${field.key}" needs bytes ${field.offset}..${field.offset + width - 1} but the payload has ${bytes.length} bytes`,
    );
  }
  const little = field.endian === 'little';
  if (field.type === 'bool') {
    const byte = bytes[field.offset]!;
    return field.bit === undefined ? byte !== 0 : ((byte >> field.bit) & 1) === 1;
  }
  let raw: number;
  if (field.type === 'float32' || field.type === 'float64') {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    raw =
      field.type === 'float32'
        ? view.getFloat32(field.offset, little)
        : view.getFloat64(field.offset, little);
  } else {
    raw = readInteger(bytes, field.offset, width, field.type.startsWith('int'), little);
  }
  if (field.scale === undefined && field.add === undefined) return raw;
  // 15 significant digits: 258 * 0.1 is 25.8, not 25.800000000000004.
  return Number((raw * (field.scale ?? 1) + (field.add ?? 0)).toPrecision(15));
}

/** Normalises a validated config into fields (endian defaults to big, network order). */
export function layoutOf(config: Record<string, unknown>): BinaryField[] {
  const problems = validateLayout(config);
  if (problems.length > 0) {
    throw new ParseError(
      `Invalid binary layout: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
    );
  }
  return (config.fields as Array<Record<string, unknown>>).map((f) => ({
    ...(f as unknown as BinaryField),
    endian: f.endian === 'little' ? 'little' : 'big',
  }));
}

export function parseLayout(bytes: Buffer, fields: BinaryField[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const field of fields) setOwn(values, field.key, readField(bytes, field));
  return values;
}

export const binaryParser: ParserPlugin = {
  type: 'binary',
  validate: validateLayout,
  parse: async (payload, config) => parseLayout(payload, layoutOf(config)),
  compile: async (config) => {
    const fields = layoutOf(config);
    return { parse: async (payload) => parseLayout(payload, fields) };
  },
};
