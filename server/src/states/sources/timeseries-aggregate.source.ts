import { Type, type Static } from 'typebox';
import { defineSource } from './state-source-kind.js';
import { Id, MAX_INTERVAL_SECONDS, MAX_WINDOW_SECONDS, oneOf, Seconds } from './fields.js';
import type { TimeAggregateOperation } from './time-aggregated.source.js';

/** The time-aggregated operations but `difference` (a window has no previous period). */
const WINDOW_OPERATIONS = [
  'sum',
  'max',
  'min',
  'mean',
  'count',
] as const satisfies readonly TimeAggregateOperation[];

const settings = Type.Object({
  type: Type.Literal('timeseries-aggregate'),
  stateId: Id,
  operation: oneOf(WINDOW_OPERATIONS),
  windowSeconds: Seconds(MAX_WINDOW_SECONDS),
  intervalSeconds: Seconds(MAX_INTERVAL_SECONDS),
});

/** Over the stored time series of another state, in a sliding window, recomputed every interval. */
export type TimeseriesAggregateSource = Static<typeof settings>;

export const timeseriesAggregateSource = defineSource<TimeseriesAggregateSource>({
  type: 'timeseries-aggregate',
  summary: "Over another state's stored time series in a sliding window, recomputed every interval.",
  settings,
  reads: 'stateId',
  settable: false,
  compute: 'window',
  form: [
    { key: 'stateId', widget: 'state' },
    { key: 'operation', widget: 'choice' },
    { key: 'windowSeconds', widget: 'number' },
    { key: 'intervalSeconds', widget: 'number' },
  ],
});
