import type { Body, Reply } from '../../api/generated';
import { problemsByPath } from '../form-problems';
import type { SchemaProblemTexts } from '../format/schema-problem';

/**
 * The driver editor's form state and its conversion to and from the XAPI's driver body. Numbers
 * stay text while editing, so a half-typed value is not lost; they are converted on save.
 */

export type Driver = Reply<'GET /xapi/v1/device-drivers/{id}'>;
export type DriverBody = Body<'POST /xapi/v1/device-drivers'>;
export type ValueType = 'number' | 'boolean' | 'string' | 'object';

/** The parser plugins the server registers (server/src/drivers/parsers/index.ts). */
export const PARSER_TYPES = ['json', 'cbor', 'binary', 'javascript'] as const;
export type ParserType = (typeof PARSER_TYPES)[number];

/** Field types of the binary layout parser, with their width in bytes. */
export const FIELD_TYPES = {
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
export type FieldType = keyof typeof FIELD_TYPES;

export const VALUE_TYPES: readonly ValueType[] = ['number', 'boolean', 'string', 'object'];
export const PARSED_STATE = '_parsed';
export const RAW_STATE = '_raw';

const ANY = ['exists', 'missing'];
/** Health rule operators valid per state type (server/src/drivers/health-config.validator.ts). */
export const OPERATORS_BY_TYPE: Record<ValueType, readonly string[]> = {
  number: ['<', '<=', '>', '>=', '==', '!=', 'between', ...ANY],
  boolean: ['==', '!=', 'isTrue', 'isFalse', ...ANY],
  string: ['==', '!=', 'contains', 'matches', ...ANY],
  object: ['hasKey', ...ANY],
};
const ALL_OPERATORS = [...new Set(Object.values(OPERATORS_BY_TYPE).flat())];

export const SCRIPT_TEMPLATE = `function parse(bytes, meta) {
  // bytes: the packet as numbers 0–255; return an object of values
  return { temperature: ((bytes[0] << 8) | bytes[1]) / 10 };
}
`;

export interface FieldRow {
  id: number;
  key: string;
  offset: string;
  type: FieldType;
  endian: 'big' | 'little';
  scale: string;
  add: string;
}

export interface VariableRow {
  id: number;
  key: string;
  type: ValueType;
  unit: string;
}

export interface RuleRow {
  id: number;
  state: string;
  operator: string;
  value: string;
  /** Upper bound of `between`. */
  valueMax: string;
  result: string;
}

export interface DriverDraft {
  title: string;
  description: string;
  shared: boolean;
  parserType: string;
  fields: FieldRow[];
  code: string;
  timeoutMs: string;
  variables: VariableRow[];
  rules: RuleRow[];
  silentAfterSeconds: string;
}

let nextRowId = 1;
export const rowId = () => nextRowId++;

/** A stored value as the form's text: strings as they are, numbers, booleans and the rest as JSON. */
export const text = (value: unknown): string => {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
};

export function emptyField(offset = 0): FieldRow {
  return { id: rowId(), key: '', offset: String(offset), type: 'uint8', endian: 'big', scale: '', add: '' };
}

export function emptyRule(state = ''): RuleRow {
  return { id: rowId(), state, operator: '', value: '', valueMax: '', result: '' };
}

export function draftOf(driver?: Driver): DriverDraft {
  const parser = (driver?.parser ?? { type: 'json' }) as Record<string, unknown> & { type: string };
  const fields = Array.isArray(parser.fields) ? (parser.fields as Record<string, unknown>[]) : [];
  return {
    title: driver?.title ?? '',
    description: driver?.description ?? '',
    shared: driver?.shared ?? false,
    parserType: parser.type,
    fields: fields.map((f) => ({
      id: rowId(),
      key: text(f.key),
      offset: text(f.offset),
      type: (f.type as FieldType) ?? 'uint8',
      endian: f.endian === 'little' ? 'little' : 'big',
      scale: text(f.scale),
      add: text(f.add),
    })),
    code: typeof parser.code === 'string' ? parser.code : '',
    timeoutMs: text(parser.timeoutMs),
    variables: (driver?.targetVariables ?? []).map((v) => ({
      id: rowId(),
      key: v.key,
      type: v.type,
      unit: v.unit ?? '',
    })),
    ...healthDraftOf(driver?.healthConfig),
  };
}

export type HealthConfig = Driver['healthConfig'];

/** A stored health configuration as editable rows (drivers and templates share it). */
export function healthDraftOf(health?: Partial<HealthConfig> | null): {
  rules: RuleRow[];
  silentAfterSeconds: string;
} {
  return {
    rules: (health?.rules ?? []).map((r) => ({
      id: rowId(),
      state: r.state,
      operator: r.operator,
      value: Array.isArray(r.value) ? text(r.value[0]) : text(r.value),
      valueMax: Array.isArray(r.value) ? text(r.value[1]) : '',
      result: r.result,
    })),
    silentAfterSeconds: text(health?.silentAfterSeconds),
  };
}

/** Text → number for the API; a value that is not a number goes as text so the server names it. */
function numeric(value: string): number | string {
  const trimmed = value.trim();
  const n = Number(trimmed);
  return trimmed !== '' && Number.isFinite(n) ? n : trimmed;
}

export function parserOf(draft: DriverDraft): DriverBody['parser'] & Record<string, unknown> {
  if (draft.parserType === 'binary') {
    return {
      type: 'binary',
      fields: draft.fields.map((f) => ({
        key: f.key.trim(),
        offset: numeric(f.offset),
        type: f.type,
        endian: f.endian,
        ...(f.scale.trim() ? { scale: numeric(f.scale) } : {}),
        ...(f.add.trim() ? { add: numeric(f.add) } : {}),
      })),
    };
  }
  if (draft.parserType === 'javascript') {
    return {
      type: 'javascript',
      code: draft.code,
      ...(draft.timeoutMs.trim() ? { timeoutMs: numeric(draft.timeoutMs) } : {}),
    };
  }
  return { type: draft.parserType };
}

export function variablesOf(draft: DriverDraft): NonNullable<DriverBody['targetVariables']> {
  return draft.variables.map((v) => ({
    key: v.key.trim(),
    type: v.type,
    ...(v.unit.trim() ? { unit: v.unit.trim() } : {}),
  }));
}

/**
 * Network-server metadata states a health rule may use besides the driver's (the server knows more,
 * docs/lorawan.md): the ones worth a rule, e.g. `_meta.rssi < -120` for poor coverage.
 */
export const META_STATES: ReadonlyArray<{ key: string; type: ValueType }> = [
  { key: '_meta.rssi', type: 'number' },
  { key: '_meta.snr', type: 'number' },
  { key: '_meta.fCnt', type: 'number' },
  { key: '_meta.gatewayCount', type: 'number' },
  { key: '_meta.gateway', type: 'string' },
  { key: '_meta.battery', type: 'number' },
  { key: '_meta.margin', type: 'number' },
];

/** The type of a rule's state: a target variable's, `object` for `_parsed`, `raw` for `_raw`. */
export function stateKind(
  state: string,
  variables: readonly { key: string; type: ValueType }[],
): ValueType | 'raw' | undefined {
  if (state === RAW_STATE) return 'raw';
  if (state === PARSED_STATE) return 'object';
  const meta = META_STATES.find((m) => m.key === state);
  if (meta) return meta.type;
  return variables.find((v) => v.key.trim() === state)?.type;
}

export function operatorsFor(kind: ValueType | 'raw' | undefined): readonly string[] {
  if (!kind) return [];
  return kind === 'raw' ? ALL_OPERATORS : OPERATORS_BY_TYPE[kind];
}

export type ValueInput = 'none' | 'number' | 'range' | 'boolean' | 'text';

/** Which input a rule's value needs for its operator and state type. */
export function valueInput(operator: string, kind: ValueType | 'raw' | undefined): ValueInput {
  if (['<', '<=', '>', '>='].includes(operator)) return 'number';
  if (operator === 'between') return 'range';
  if (['contains', 'hasKey', 'matches'].includes(operator)) return 'text';
  if (operator === '==' || operator === '!=') {
    if (kind === 'number') return 'number';
    if (kind === 'boolean') return 'boolean';
    return 'text';
  }
  return 'none';
}

function ruleValue(rule: RuleRow, kind: ValueType | 'raw' | undefined): unknown {
  switch (valueInput(rule.operator, kind)) {
    case 'none':
      return undefined;
    case 'number':
      return numeric(rule.value);
    case 'range':
      return [numeric(rule.value), numeric(rule.valueMax)];
    case 'boolean':
      return rule.value === 'true';
    case 'text':
      return rule.value;
  }
}

/** Rows → the XAPI's health configuration; values get the type their operator and state need. */
export function healthBodyOf(
  rules: readonly RuleRow[],
  silentAfterSeconds: string,
  variables: readonly { key: string; type: ValueType }[],
): HealthConfig {
  const states = variables.map((v) => ({ key: v.key.trim(), type: v.type }));
  return {
    rules: rules.map((rule) => {
      const value = ruleValue(rule, stateKind(rule.state, states));
      return {
        state: rule.state,
        operator: rule.operator,
        result: rule.result.trim(),
        ...(value === undefined ? {} : { value }),
      };
    }),
    ...(silentAfterSeconds.trim() ? { silentAfterSeconds: numeric(silentAfterSeconds) as number } : {}),
  };
}

export const healthConfigOf = (draft: DriverDraft): HealthConfig =>
  healthBodyOf(draft.rules, draft.silentAfterSeconds, draft.variables);

export function bodyOf(draft: DriverDraft): DriverBody {
  return {
    title: draft.title.trim(),
    description: draft.description,
    shared: draft.shared,
    parser: parserOf(draft),
    targetVariables: variablesOf(draft),
    healthConfig: healthConfigOf(draft),
  };
}

/**
 * The error's `details` as messages per form path: `/parser/fields/0/offset`, `/rules/1/value`
 * (the health validator's paths start at the rules, so `/healthConfig` is dropped), `/targetVariables/0/key`.
 */
export const driverProblems = (
  details: unknown[],
  fallback: string,
  t: SchemaProblemTexts,
): Map<string, string> => problemsByPath(details, fallback, t, { under: '/healthConfig' });

export type SampleFormat = 'text' | 'hex' | 'base64';

/** The parser test's payload in the XAPI's shape; text goes as base64 of its UTF-8 bytes. */
export function samplePayload(sample: string, format: SampleFormat): { hex: string } | { base64: string } {
  if (format === 'hex')
    return {
      hex: sample
        .replace(/0x/gi, '')
        .replace(/[,\s]+/g, ' ')
        .trim(),
    };
  if (format === 'base64') return { base64: sample.replace(/\s+/g, '') };
  const bytes = new TextEncoder().encode(sample);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return { base64: btoa(binary) };
}

/** Where the next binary field starts: right after the field that ends last. */
export function nextOffset(fields: readonly FieldRow[]): number {
  let end = 0;
  for (const f of fields) {
    const offset = Number(f.offset);
    if (Number.isInteger(offset)) end = Math.max(end, offset + FIELD_TYPES[f.type]);
  }
  return end;
}
