import { describe, expect, it } from 'vitest';
import { AppError } from '../platform/errors.js';
import { STATE_SOURCE_TYPES } from './sources/index.js';
import { parseStateSource } from './state-source.schemas.js';

const A = '0190e4c4-0000-7000-8000-000000000001';
const B = '0190e4c4-0000-7000-8000-000000000002';

/** The VALIDATION_ERROR a source gives, as its detail paths. */
function refusal(source: unknown): string[] {
  try {
    parseStateSource(source);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('VALIDATION_ERROR');
    return ((error as AppError).details as Array<{ path: string }>).map((d) => d.path);
  }
  throw new Error('source was accepted');
}

describe('state sources', () => {
  it('accepts one example of every type and drops unknown properties', () => {
    const examples = [
      { type: 'connector', connectorId: A, deviceId: B, stateKey: 'flow' },
      { type: 'dynamic-routing', stateKey: 'temperature' },
      { type: 'aggregate', operation: 'sum', stateIds: [A, B] },
      { type: 'aggregate', operation: 'difference', stateIds: [A] },
      { type: 'time-aggregated', stateId: A, operation: 'count', period: 'previous-month' },
      {
        type: 'timeseries-aggregate',
        stateId: A,
        operation: 'mean',
        windowSeconds: 3600,
        intervalSeconds: 60,
      },
      { type: 'random', min: 0, max: 0, intervalSeconds: 5, decimals: 0 },
      { type: 'boolean', initial: true },
      { type: 'hub', deviceId: A, stateKey: 'battery' },
    ];
    for (const example of examples) expect(parseStateSource(example)).toEqual(example);
    expect(parseStateSource({ type: 'boolean', color: 'red' })).toEqual({ type: 'boolean' });
    expect(parseStateSource(null)).toBeNull();
  });

  it('names the path of what is wrong', () => {
    expect(refusal({ type: 'nope' })).toEqual(['/source/type']);
    expect(refusal([])).toEqual(['/source']);
    expect(refusal({ type: 'random', min: 5, max: 1, intervalSeconds: 1 })).toEqual(['/source/min']);
    expect(refusal({ type: 'random', min: 0, max: 1, intervalSeconds: 0 })).toEqual([
      '/source/intervalSeconds',
    ]);
    expect(refusal({ type: 'random', min: 0, max: 1, intervalSeconds: 86_401 })).toEqual([
      '/source/intervalSeconds',
    ]);
    expect(refusal({ type: 'aggregate', operation: 'difference', stateIds: [A, B] })).toEqual([
      '/source/stateIds',
    ]);
    expect(refusal({ type: 'aggregate', operation: 'median', stateIds: [A] })).toContain('/source/operation');
    expect(refusal({ type: 'aggregate', operation: 'sum', stateIds: [] })).toEqual(['/source/stateIds']);
    expect(refusal({ type: 'aggregate', operation: 'sum', stateIds: ['x'] })).toEqual(['/source/stateIds/0']);
    expect(refusal({ type: 'time-aggregated', stateId: A, operation: 'sum', period: 'fortnight' })).toContain(
      '/source/period',
    );
    expect(
      refusal({
        type: 'timeseries-aggregate',
        stateId: A,
        operation: 'difference',
        windowSeconds: 60,
        intervalSeconds: 60,
      }),
    ).toContain('/source/operation');
    expect(
      refusal({
        type: 'timeseries-aggregate',
        stateId: A,
        operation: 'sum',
        windowSeconds: 400 * 86_400,
        intervalSeconds: 60,
      }),
    ).toEqual(['/source/windowSeconds']);
    expect(refusal({ type: 'connector', connectorId: A, stateKey: 'x' })).toEqual(['/source/deviceId']);
  });

  it('give each problem a keyword and params clients word it from', () => {
    const details = (source: unknown) => {
      try {
        parseStateSource(source);
      } catch (error) {
        return (error as AppError).details;
      }
      throw new Error('source was accepted');
    };
    expect(details({ type: 'nope' })).toEqual([
      {
        location: 'body',
        path: '/source/type',
        keyword: 'enum',
        params: { allowedValues: STATE_SOURCE_TYPES },
        message: `must be one of ${STATE_SOURCE_TYPES.join(', ')}`,
      },
    ]);
    expect(details('x')).toMatchObject([
      { path: '/source', keyword: 'type', params: { type: ['object', 'null'] } },
    ]);
    expect(details({ type: 'connector', connectorId: A, stateKey: 'x' })).toMatchObject([
      {
        path: '/source/deviceId',
        keyword: 'required',
        params: { missingProperty: 'deviceId' },
        message: 'is required',
      },
    ]);
    expect(details({ type: 'aggregate', operation: 'median', stateIds: [A] })).toMatchObject([
      {
        path: '/source/operation',
        keyword: 'enum',
        params: { allowedValues: expect.arrayContaining(['sum']) as unknown },
      },
    ]);
    expect(details({ type: 'random', min: 0, max: 1, intervalSeconds: 0 })).toMatchObject([
      { path: '/source/intervalSeconds', keyword: 'minimum', params: { limit: 1 } },
    ]);
    expect(details({ type: 'random', min: 5, max: 1, intervalSeconds: 1 })).toEqual([
      {
        location: 'body',
        path: '/source/min',
        keyword: 'maximum',
        params: { comparison: '<=', limit: 1 },
        message: 'must not be greater than max',
      },
    ]);
    expect(details({ type: 'aggregate', operation: 'difference', stateIds: [A, B] })).toMatchObject([
      {
        path: '/source/stateIds',
        keyword: 'maxItems',
        params: { limit: 1 },
        message: 'difference takes exactly one state',
      },
    ]);
  });
});
