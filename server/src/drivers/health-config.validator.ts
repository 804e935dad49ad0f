import { errors } from '../platform/errors.js';
import { integerProblem, problem, type CheckProblem } from '../platform/http/problem-detail.js';
import { META_STATE_TYPES } from '../ingest/meta-state-types.js';
import type { TargetVariable, ValueType } from './device-driver.entity.js';

/**
 * Checks a health configuration against the states it may refer to. Shared by drivers,
 * templates and devices (all carry a `healthConfig`).
 *
 * A rule's `state` is a target variable key, `_parsed` (the whole parsed object) or `_raw`
 * (the packet as received), or a `_meta.*` state (the network server's metadata, ingest/meta-state-types.ts). Its operator must fit the state's type, its value the operator.
 * `_raw` never causes a rejection by itself (spec: "HTTP 422 … not for configs containing
 * _raw"): every known operator is accepted on it, only the value is checked for that operator.
 */

export const PARSED_STATE = '_parsed';
export const RAW_STATE = '_raw';

type StateKind = ValueType | 'raw';

/** What a rule's `value` must be for an operator. */
type ValueRule = 'none' | 'number' | 'range' | 'boolean' | 'string' | 'regex' | 'scalar';

const ANY = ['exists', 'missing'] as const;

export const OPERATORS_BY_TYPE: Record<ValueType, readonly string[]> = {
  number: ['<', '<=', '>', '>=', '==', '!=', 'between', ...ANY],
  boolean: ['==', '!=', 'isTrue', 'isFalse', ...ANY],
  string: ['==', '!=', 'contains', 'matches', ...ANY],
  object: ['hasKey', ...ANY],
};

const ALL_OPERATORS = [...new Set(Object.values(OPERATORS_BY_TYPE).flat())];

const MAX_PATTERN_LENGTH = 200;
const MAX_SILENT_SECONDS = 366 * 24 * 3600;

function valueRule(operator: string, kind: StateKind): ValueRule {
  switch (operator) {
    case '<':
    case '<=':
    case '>':
    case '>=':
      return 'number';
    case 'between':
      return 'range';
    case 'contains':
    case 'hasKey':
      return 'string';
    case 'matches':
      return 'regex';
    case '==':
    case '!=':
      return kind === 'raw' || kind === 'object' ? 'scalar' : kind;
    default:
      return 'none';
  }
}

/** What is wrong with a rule's value: a keyword where one fits (problem-detail.ts) and the English. */
type ValueProblem = Omit<CheckProblem, 'path'>;

const typeProblem = (type: string | string[], message: string): ValueProblem => ({
  keyword: 'type',
  params: { type },
  message,
});

function valueProblem(rule: ValueRule, value: unknown): ValueProblem | undefined {
  switch (rule) {
    case 'none':
      // No keyword says "must be absent" as plainly; the message does.
      return value === undefined ? undefined : { message: 'this operator takes no value' };
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
        ? undefined
        : typeProblem('number', 'value must be a number');
    case 'boolean':
      return typeof value === 'boolean' ? undefined : typeProblem('boolean', 'value must be true or false');
    case 'string':
      return typeof value === 'string' ? undefined : typeProblem('string', 'value must be a string');
    case 'scalar':
      return ['string', 'number', 'boolean'].includes(typeof value)
        ? undefined
        : typeProblem(['string', 'number', 'boolean'], 'value must be a string, number or boolean');
    case 'range': {
      const message = 'value must be [min, max] with min <= max';
      if (!Array.isArray(value)) return typeProblem('array', message);
      if (!value.every((v) => typeof v === 'number' && Number.isFinite(v)))
        return typeProblem('number', message);
      if (value.length !== 2)
        return { keyword: value.length < 2 ? 'minItems' : 'maxItems', params: { limit: 2 }, message };
      const [min, max] = value as [number, number];
      return min <= max
        ? undefined
        : { keyword: 'maximum', params: { comparison: '<=', limit: max }, message };
    }
    case 'regex':
      if (typeof value !== 'string')
        return typeProblem('string', 'value must be a regular expression as a string');
      if (value.length > MAX_PATTERN_LENGTH)
        return {
          keyword: 'maxLength',
          params: { limit: MAX_PATTERN_LENGTH },
          message: `the pattern is longer than ${MAX_PATTERN_LENGTH} characters`,
        };
      try {
        new RegExp(value);
        return undefined;
      } catch (error) {
        return {
          keyword: 'format',
          params: { format: 'regex' },
          message: `value is not a valid regular expression: ${(error as Error).message}`,
        };
      }
  }
}

export interface HealthConfigProblem extends CheckProblem {
  /** Index of the rule, absent for problems with the configuration as a whole. */
  index?: number;
}

/** All problems of a health configuration; empty when it is valid. */
export function validateHealthConfig(
  config: unknown,
  targetVariables: readonly TargetVariable[],
): HealthConfigProblem[] {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    return [problem('', 'type', { type: 'object' }, 'healthConfig must be an object with rules')];
  }
  const { rules, silentAfterSeconds, alarmOnChange } = config as {
    rules?: unknown;
    silentAfterSeconds?: unknown;
    alarmOnChange?: unknown;
  };
  const problems: HealthConfigProblem[] = [];
  if (alarmOnChange !== undefined && typeof alarmOnChange !== 'boolean') {
    problems.push(
      problem('/alarmOnChange', 'type', { type: 'boolean' }, 'alarmOnChange must be true or false'),
    );
  }
  const silent =
    silentAfterSeconds === undefined || silentAfterSeconds === null
      ? undefined
      : integerProblem(
          '/silentAfterSeconds',
          silentAfterSeconds,
          1,
          MAX_SILENT_SECONDS,
          `silentAfterSeconds must be an integer from 1 to ${MAX_SILENT_SECONDS}`,
        );
  if (silent) problems.push(silent);
  if (!Array.isArray(rules))
    return [...problems, problem('/rules', 'type', { type: 'array' }, 'rules must be an array')];
  const types = new Map(targetVariables.map((v) => [v.key, v.type]));
  rules.forEach((rule: unknown, index) => {
    const at = (field: string, found: ValueProblem) =>
      problems.push({
        index,
        path: `/rules/${index}${field}`,
        ...found,
        message: `rule ${index}: ${found.message}`,
      });
    if (typeof rule !== 'object' || rule === null || Array.isArray(rule))
      return at('', typeProblem('object', 'a rule must be an object'));
    const { state, operator, value, result } = rule as Record<string, unknown>;
    if (typeof result !== 'string' || result.trim() === '')
      at('/result', {
        keyword: 'required',
        params: { missingProperty: 'result' },
        message: 'result (the health state to set) is required',
      });
    let kind: StateKind | undefined;
    if (state === RAW_STATE) kind = 'raw';
    else if (state === PARSED_STATE) kind = 'object';
    else if (typeof state === 'string' && types.has(state)) kind = types.get(state);
    else if (typeof state === 'string' && Object.hasOwn(META_STATE_TYPES, state)) {
      const type = META_STATE_TYPES[state]!;
      kind = type === 'any' ? 'raw' : type;
    } else {
      const known = [...types.keys(), PARSED_STATE, RAW_STATE, '_meta.*'];
      return at('/state', {
        keyword: 'enum',
        params: { allowedValues: known },
        message: `state ${JSON.stringify(state)} is not a target variable, ${PARSED_STATE}, ${RAW_STATE} or a _meta state (known: ${known.join(', ')})`,
      });
    }
    const allowed = kind === 'raw' ? ALL_OPERATORS : OPERATORS_BY_TYPE[kind!];
    if (typeof operator !== 'string' || !allowed.includes(operator)) {
      const what = kind === 'raw' ? '' : ` for ${state} (${kind})`;
      return at('/operator', {
        keyword: 'enum',
        params: { allowedValues: allowed },
        message: `operator ${JSON.stringify(operator)} is not valid${what}; allowed: ${allowed.join(' ')}`,
      });
    }
    const found = valueProblem(valueRule(operator, kind!), value);
    if (found) at('/value', { ...found, message: `${found.message} for operator ${operator}` });
  });
  return problems;
}

/** Throws 422 INVALID_HEALTH_CONFIG naming every rule and problem; for driver, template and device services. */
export function assertValidHealthConfig(config: unknown, targetVariables: readonly TargetVariable[]): void {
  const problems = validateHealthConfig(config, targetVariables);
  if (problems.length === 0) return;
  throw errors.unprocessable(
    'INVALID_HEALTH_CONFIG',
    `Invalid health configuration: ${problems.map((p) => p.message).join('; ')}`,
    problems,
  );
}
