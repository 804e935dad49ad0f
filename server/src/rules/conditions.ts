import { OPERATORS_BY_TYPE } from '../drivers/health-config.validator.js';
import { problem, type CheckProblem } from '../platform/http/problem-detail.js';

/**
 * Conditions on twin states, with the operators health rules use per value type (one vocabulary):
 *   number:  <  <=  >  >=  ==  !=  between [min, max]
 *   boolean: ==  !=  isTrue  isFalse
 *   string:  ==  !=  contains  matches (regular expression, up to 200 characters)
 *   object:  hasKey
 *   any:     exists  missing
 * A condition on a value of another type than its operator needs does not hold (no coercion of
 * text to numbers); a missing state satisfies only `missing`.
 */

export interface Condition {
  stateKey: string;
  operator: string;
  value?: unknown;
}

export type ConditionValueType = keyof typeof OPERATORS_BY_TYPE;

export const ALL_CONDITION_OPERATORS = [...new Set(Object.values(OPERATORS_BY_TYPE).flat())];

const MAX_PATTERN = 200;

/** Why a condition cannot be used (for a state of `valueType` when known), or undefined. */
export function conditionProblem(c: Condition, valueType?: string): string | undefined {
  return conditionDetail('', c, valueType)?.message;
}

/**
 * conditionProblem as a detail at the condition's `path` + `/operator` or `/value` (`/value/0` for
 * a bound of `between`), with the keyword a schema would use; an empty bound is `required`.
 */
export function conditionDetail(path: string, c: Condition, valueType?: string): CheckProblem | undefined {
  const allowed =
    valueType && valueType in OPERATORS_BY_TYPE
      ? OPERATORS_BY_TYPE[valueType as ConditionValueType]
      : valueType === 'integer'
        ? OPERATORS_BY_TYPE.number
        : ALL_CONDITION_OPERATORS;
  if (!allowed.includes(c.operator)) {
    return problem(
      `${path}/operator`,
      'enum',
      { allowedValues: allowed },
      `operator "${c.operator}" does not apply${valueType ? ` to a ${valueType} state` : ''}; use one of ${allowed.join(', ')}`,
    );
  }
  const at = `${path}/value`;
  const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  switch (c.operator) {
    case '<':
    case '<=':
    case '>':
    case '>=':
      return isNumber(c.value)
        ? undefined
        : problem(at, 'type', { type: 'number' }, 'value must be a number');
    case 'between':
      return rangeDetail(at, c.value);
    case '==':
    case '!=':
      return ['string', 'number', 'boolean'].includes(typeof c.value)
        ? undefined
        : problem(
            at,
            'type',
            { type: ['string', 'number', 'boolean'] },
            'value must be a string, number or boolean',
          );
    case 'contains':
    case 'hasKey':
      return typeof c.value === 'string'
        ? undefined
        : problem(at, 'type', { type: 'string' }, 'value must be a string');
    case 'matches': {
      const message = `value must be a pattern of at most ${MAX_PATTERN} characters`;
      if (typeof c.value !== 'string') return problem(at, 'type', { type: 'string' }, message);
      if (c.value.length > MAX_PATTERN) return problem(at, 'maxLength', { limit: MAX_PATTERN }, message);
      try {
        new RegExp(c.value);
        return undefined;
      } catch {
        return problem(at, 'format', { format: 'regex' }, 'value is not a valid regular expression');
      }
    }
    default:
      // No JSON Schema keyword says "must be absent" as plainly; the message says it.
      return c.value === undefined ? undefined : { path: at, message: 'this operator takes no value' };
  }
}

/** `between`'s `[min, max]`: two numbers, min not above max. */
function rangeDetail(at: string, value: unknown): CheckProblem | undefined {
  const message = 'value must be [min, max] with min <= max';
  if (!Array.isArray(value)) return problem(at, 'type', { type: 'array' }, message);
  if (value.length < 2) return problem(at, 'minItems', { limit: 2 }, message);
  if (value.length > 2) return problem(at, 'maxItems', { limit: 2 }, message);
  for (const [i, bound] of value.entries()) {
    if (bound === null || bound === undefined) return problem(`${at}/${i}`, 'required', {}, message);
    if (typeof bound !== 'number' || !Number.isFinite(bound))
      return problem(`${at}/${i}`, 'type', { type: 'number' }, message);
  }
  const [min, max] = value as [number, number];
  return min <= max ? undefined : problem(`${at}/0`, 'maximum', { limit: max }, message);
}

const present = (v: unknown) => v !== null && v !== undefined;

/** Whether the condition holds for `value` (the state's current value; undefined: no such state). */
export function conditionHolds(c: Condition, value: unknown): boolean {
  switch (c.operator) {
    case 'exists':
      return present(value);
    case 'missing':
      return !present(value);
    case 'isTrue':
      return value === true;
    case 'isFalse':
      return value === false;
    case '==':
      return present(value) && value === c.value;
    case '!=':
      return present(value) && value !== c.value;
    case 'contains':
      return typeof value === 'string' && value.includes(String(c.value));
    case 'matches':
      return typeof value === 'string' && safeTest(String(c.value), value);
    case 'hasKey':
      return (
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        Object.hasOwn(value, String(c.value))
      );
  }
  if (typeof value !== 'number') return false;
  const n = c.value as number;
  switch (c.operator) {
    case '<':
      return value < n;
    case '<=':
      return value <= n;
    case '>':
      return value > n;
    case '>=':
      return value >= n;
    case 'between': {
      const [lo, hi] = c.value as [number, number];
      return value >= lo && value <= hi;
    }
  }
  return false;
}

function safeTest(pattern: string, text: string): boolean {
  try {
    // Bounded input: patterns are checked at save time, texts cut to keep a bad pattern cheap.
    return new RegExp(pattern).test(text.slice(0, 10_000));
  } catch {
    return false;
  }
}

/** All (`all`) or one (`any`) of the conditions hold over the twin's states by key. */
export function conditionsHold(
  conditions: Condition[],
  states: Record<string, unknown>,
  match: 'all' | 'any' = 'all',
): boolean {
  if (conditions.length === 0) return true;
  const results = conditions.map((c) => conditionHolds(c, states[c.stateKey]));
  return match === 'all' ? results.every(Boolean) : results.some(Boolean);
}
