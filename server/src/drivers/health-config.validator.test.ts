import { describe, expect, it } from 'vitest';
import { AppError } from '../platform/errors.js';
import type { TargetVariable } from './device-driver.entity.js';
import {
  assertValidHealthConfig,
  OPERATORS_BY_TYPE,
  validateHealthConfig,
} from './health-config.validator.js';

const VARIABLES: TargetVariable[] = [
  { key: 'flow', type: 'number', unit: 'm³/h' },
  { key: 'door', type: 'boolean' },
  { key: 'status', type: 'string' },
  { key: 'gps', type: 'object' },
];

const rule = (state: string, operator: string, value?: unknown) => ({
  state,
  operator,
  ...(value === undefined ? {} : { value }),
  result: 'Warning',
});
const check = (...rules: unknown[]) => validateHealthConfig({ rules }, VARIABLES);

describe('health config validator', () => {
  it('accepts every operator that fits the state type, with fitting values', () => {
    expect(
      check(
        rule('flow', '<', 1),
        rule('flow', '>=', 0.5),
        rule('flow', '==', 3),
        rule('flow', 'between', [1, 2]),
        rule('door', '==', true),
        rule('door', 'isTrue'),
        rule('door', 'isFalse'),
        rule('status', 'contains', 'err'),
        rule('status', 'matches', '^E[0-9]+$'),
        rule('status', '!=', 'ok'),
        rule('gps', 'hasKey', 'lat'),
        rule('_parsed', 'hasKey', 'flow'),
        rule('_parsed', 'missing'),
        rule('flow', 'exists'),
      ),
    ).toEqual([]);
  });

  it('never rejects a config because it uses _raw', () => {
    const all = [...new Set(Object.values(OPERATORS_BY_TYPE).flat())];
    const sample: Record<string, unknown> = {
      '<': 1,
      '<=': 1,
      '>': 1,
      '>=': 1,
      '==': 'x',
      '!=': 2,
      between: [0, 1],
      contains: 'a',
      matches: 'a+',
      hasKey: 'k',
    };
    expect(check(...all.map((op) => rule('_raw', op, sample[op])))).toEqual([]);
  });

  it('accepts rules on _meta states with operators of their type, without a target variable', () => {
    expect(check(rule('_meta.rssi', '<', -120), rule('_meta.gateway', '==', 'b827ebfffe000001'))).toEqual([]);
    expect(check(rule('_meta.dataRate', 'contains', 'SF12'), rule('_meta.gateways', 'exists'))).toEqual([]);
    expect(check(rule('_meta.rssi', 'contains', 'x'))).toMatchObject([{ path: '/rules/0/operator' }]);
    expect(check(rule('_meta.nope', 'exists'))).toMatchObject([{ path: '/rules/0/state' }]);
  });

  it('names the rule index and the problem', () => {
    expect(
      check(
        rule('flow', 'contains', 'x'),
        rule('nope', '==', 1),
        rule('door', '<', 1),
        rule('flow', '>', 'high'),
        rule('flow', 'between', [5, 1]),
        rule('status', 'matches', '(['),
        rule('door', 'isTrue', true),
        rule('_parsed', '>', 1),
        { state: 'flow', operator: 'exists' },
        'not a rule',
      ),
    ).toMatchObject([
      {
        index: 0,
        path: '/rules/0/operator',
        message: expect.stringMatching(
          /^rule 0: operator "contains" is not valid for flow \(number\)/,
        ) as string,
      },
      {
        index: 1,
        path: '/rules/1/state',
        message: expect.stringMatching(
          /^rule 1: state "nope" is not a target variable, _parsed, _raw or a _meta state/,
        ) as string,
      },
      {
        index: 2,
        path: '/rules/2/operator',
        message: expect.stringMatching(/^rule 2: operator "<" is not valid for door \(boolean\)/) as string,
      },
      { index: 3, path: '/rules/3/value', message: 'rule 3: value must be a number for operator >' },
      {
        index: 4,
        path: '/rules/4/value',
        message: 'rule 4: value must be [min, max] with min <= max for operator between',
      },
      {
        index: 5,
        path: '/rules/5/value',
        message: expect.stringMatching(/^rule 5: value is not a valid regular expression/) as string,
      },
      {
        index: 6,
        path: '/rules/6/value',
        message: 'rule 6: this operator takes no value for operator isTrue',
      },
      {
        index: 7,
        path: '/rules/7/operator',
        message: expect.stringMatching(/^rule 7: operator ">" is not valid for _parsed \(object\)/) as string,
      },
      { index: 8, path: '/rules/8/result', message: 'rule 8: result (the health state to set) is required' },
      { index: 9, path: '/rules/9', message: 'rule 9: a rule must be an object' },
    ]);
  });

  it('gives each problem the keyword a schema would use, keeping the rule in the message', () => {
    expect(
      check(
        rule('flow', 'contains', 'x'),
        rule('nope', '==', 1),
        rule('flow', '>', 'high'),
        rule('flow', 'between', [5, 1]),
        rule('status', 'matches', '(['),
        rule('door', 'isTrue', true),
        { state: 'flow', operator: 'exists' },
      ).map(({ path, keyword, params }) => ({ path, keyword, params })),
    ).toEqual([
      {
        path: '/rules/0/operator',
        keyword: 'enum',
        params: { allowedValues: expect.arrayContaining(['<', 'between']) as unknown },
      },
      {
        path: '/rules/1/state',
        keyword: 'enum',
        params: { allowedValues: ['flow', 'door', 'status', 'gps', '_parsed', '_raw', '_meta.*'] },
      },
      { path: '/rules/2/value', keyword: 'type', params: { type: 'number' } },
      { path: '/rules/3/value', keyword: 'maximum', params: { comparison: '<=', limit: 1 } },
      { path: '/rules/4/value', keyword: 'format', params: { format: 'regex' } },
      // "No value here" has no keyword: the message says it.
      { path: '/rules/5/value', keyword: undefined, params: undefined },
      { path: '/rules/6/result', keyword: 'required', params: { missingProperty: 'result' } },
    ]);
    expect(validateHealthConfig({ rules: [], silentAfterSeconds: 0 }, VARIABLES)).toMatchObject([
      { path: '/silentAfterSeconds', keyword: 'minimum', params: { limit: 1 } },
    ]);
  });

  it('checks the shape and silentAfterSeconds', () => {
    expect(validateHealthConfig(null, VARIABLES)).toHaveLength(1);
    expect(validateHealthConfig({}, VARIABLES)).toEqual([
      { path: '/rules', keyword: 'type', params: { type: 'array' }, message: 'rules must be an array' },
    ]);
    expect(validateHealthConfig({ rules: [], silentAfterSeconds: 0 }, VARIABLES)).toHaveLength(1);
    expect(validateHealthConfig({ rules: [], silentAfterSeconds: 600 }, VARIABLES)).toEqual([]);
  });

  it('throws 422 INVALID_HEALTH_CONFIG with the problems as details', () => {
    let thrown: unknown;
    try {
      assertValidHealthConfig({ rules: [rule('door', 'between', [1, 2])] }, VARIABLES);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ status: 422, code: 'INVALID_HEALTH_CONFIG', details: [{ index: 0 }] });
    expect(() => assertValidHealthConfig({ rules: [rule('_raw', 'contains', 'x')] }, [])).not.toThrow();
  });
});
