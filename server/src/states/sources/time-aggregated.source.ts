import { Type, type Static } from 'typebox';
import { defineSource } from './state-source-kind.js';
import { Id, oneOf } from './fields.js';

export const TIME_AGGREGATE_OPERATIONS = ['sum', 'max', 'min', 'mean', 'count', 'difference'] as const;
export type TimeAggregateOperation = (typeof TIME_AGGREGATE_OPERATIONS)[number];

export const CALENDAR_PERIODS = [
  'minute',
  'hour',
  'day',
  'week',
  'month',
  'year',
  'previous-day',
  'previous-week',
  'previous-month',
  'previous-year',
] as const;
export type CalendarPeriod = (typeof CALENDAR_PERIODS)[number];

const settings = Type.Object({
  type: Type.Literal('time-aggregated'),
  stateId: Id,
  operation: oneOf(TIME_AGGREGATE_OPERATIONS),
  period: oneOf(CALENDAR_PERIODS),
});

/**
 * Over the values another state received in the current calendar period (in the account's time
 * zone); `previous-*` periods give the value of the last complete period. `count` is 0 for an
 * empty period, never null; `difference` is the period's last value minus the previous period's.
 */
export type TimeAggregatedSource = Static<typeof settings>;

export const timeAggregatedSource = defineSource<TimeAggregatedSource>({
  type: 'time-aggregated',
  summary: 'Over the values another state received in the current (or last complete) calendar period.',
  settings,
  reads: 'stateId',
  settable: false,
  compute: 'period',
  recomputable: true,
  form: [
    { key: 'stateId', widget: 'state' },
    { key: 'operation', widget: 'choice' },
    { key: 'period', widget: 'choice' },
  ],
});
