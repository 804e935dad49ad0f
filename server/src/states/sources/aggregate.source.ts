import { Type, type Static } from 'typebox';
import { problem } from '../../platform/http/problem-detail.js';
import { defineSource } from './state-source-kind.js';
import { Id, MAX_AGGREGATED_STATES, oneOf } from './fields.js';

export const AGGREGATE_OPERATIONS = ['sum', 'mean', 'min', 'max', 'count', 'difference'] as const;
export type AggregateOperation = (typeof AGGREGATE_OPERATIONS)[number];

const settings = Type.Object({
  type: Type.Literal('aggregate'),
  operation: oneOf(AGGREGATE_OPERATIONS),
  stateIds: Type.Array(Id, { minItems: 1, maxItems: MAX_AGGREGATED_STATES, uniqueItems: true }),
});

/**
 * Over the current values of other states (of any twin of the account). `difference`: takes one
 * state and gives the difference of its two most recently received values.
 */
export type AggregateSource = Static<typeof settings>;

export const aggregateSource = defineSource<AggregateSource>({
  type: 'aggregate',
  summary: 'Sum, mean, min, max, count or difference over the current values of other states.',
  settings,
  check: (source) =>
    source.operation === 'difference' && source.stateIds.length !== 1
      ? [problem('/source/stateIds', 'maxItems', { limit: 1 }, 'difference takes exactly one state')]
      : [],
  reads: 'stateIds',
  settable: false,
  compute: 'states',
  recomputable: true,
  form: [
    { key: 'operation', widget: 'choice' },
    { key: 'stateIds', widget: 'states' },
  ],
});
