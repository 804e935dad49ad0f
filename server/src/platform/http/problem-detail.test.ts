import { describe, expect, it } from 'vitest';
import { integerProblem, problem, SERVER_KEYWORDS } from './problem-detail.js';

describe('problem details of the server’s own checks', () => {
  it('carry path, keyword, params and the English a schema failure with that keyword gets', () => {
    expect(problem('/title', 'minLength', { limit: 1 })).toEqual({
      path: '/title',
      keyword: 'minLength',
      params: { limit: 1 },
      message: 'must not be empty',
    });
    expect(problem('/source/type', 'enum', { allowedValues: ['random', 'boolean'] }).message).toBe(
      'must be one of: random, boolean',
    );
    expect(problem('/config/apiUrl', 'format', { format: 'http-url' }).message).toBe(
      'must be an http:// or https:// URL',
    );
    expect(problem('/trigger/schedule', 'minProperties', { limit: 1 }).message).toBe('must not be empty');
  });

  it('keep a check’s own English message where it gives one', () => {
    expect(problem('/config/t2', 'exclusiveMaximum', { limit: 15 }, 'must be less than t1')).toEqual({
      path: '/config/t2',
      keyword: 'exclusiveMaximum',
      params: { comparison: '<', limit: 15 },
      message: 'must be less than t1',
    });
  });

  it('name the missing property of `required` after the path, as Ajv does', () => {
    expect(problem('/title', 'required')).toEqual({
      path: '/title',
      keyword: 'required',
      params: { missingProperty: 'title' },
      message: 'is required',
    });
    expect(problem('/config/a~1b', 'required').params).toEqual({ missingProperty: 'a/b' });
    expect(problem('/rules/0/result', 'required', { missingProperty: 'result' }).params).toEqual({
      missingProperty: 'result',
    });
  });

  it('add Ajv’s comparison to the range keywords', () => {
    expect(problem('/x', 'minimum', { limit: 1 }).params).toEqual({ comparison: '>=', limit: 1 });
    expect(problem('/x', 'maximum', { limit: 9 }).params).toEqual({ comparison: '<=', limit: 9 });
    expect(problem('/x', 'exclusiveMinimum', { limit: 0 }).params).toEqual({ comparison: '>', limit: 0 });
    expect(problem('/x', 'maxItems', { limit: 2 }).params).toEqual({ limit: 2 });
  });

  it('word the server keywords in English', () => {
    expect(SERVER_KEYWORDS).toEqual(['notFound', 'unique', 'cron']);
    expect(problem('/twinId', 'notFound', { id: 'a' })).toEqual({
      path: '/twinId',
      keyword: 'notFound',
      params: { id: 'a' },
      message: 'was not found',
    });
    expect(problem('/name', 'unique', { value: 'Operators' }).message).toBe('must be unique');
    expect(problem('/cron', 'cron', { reason: 'never' }).message).toBe('is not a valid cron expression');
    expect(
      problem('/config/clientKey', 'dependentRequired', {
        property: 'clientCert',
        missingProperty: 'clientKey',
      }).message,
    ).toBe('clientKey is required with clientCert');
  });

  it('say which bound of an integer range a value breaks, or nothing when it fits', () => {
    const range = (value: unknown) => integerProblem('/offset', value, 0, 10, 'offset must be 0 to 10');
    expect(range(5)).toBeUndefined();
    expect(range(0)).toBeUndefined();
    expect(range(1.5)).toMatchObject({ keyword: 'type', params: { type: 'integer' } });
    expect(range('3')).toMatchObject({ keyword: 'type', message: 'offset must be 0 to 10' });
    expect(range(-1)).toMatchObject({ keyword: 'minimum', params: { limit: 0 } });
    expect(range(11)).toMatchObject({ keyword: 'maximum', params: { limit: 10 } });
  });
});
