/**
 * Where a data state's value comes from (`source.type`, ARCHITECTURE.md section 3). A state without a
 * source holds what `PUT /states/{id}` or a rule sets. The state engine (states/engine/) evaluates
 * these; the states API validates them (states/state-source.schemas.ts).
 */

/** A state of one device, addressed through its connector (blocks deleting that connector). */
export interface ConnectorSource {
  type: 'connector';
  connectorId: string;
  /** The virtual device's id (uuid), not its `device_id`. */
  deviceId: string;
  /** Device state key: a driver target variable, `_parsed` or `_raw`. */
  stateKey: string;
}

/** Dynamic data routing: any device whose `referenceId` equals the twin's `referenceId`. */
export interface DynamicRoutingSource {
  type: 'dynamic-routing';
  stateKey: string;
}

export const AGGREGATE_OPERATIONS = ['sum', 'mean', 'min', 'max', 'count', 'difference'] as const;
export type AggregateOperation = (typeof AGGREGATE_OPERATIONS)[number];

/**
 * Over the current values of other states (of any twin of the account). `difference`: takes one
 * state and gives the difference of its two most recently received values.
 */
export interface AggregateSource {
  type: 'aggregate';
  operation: AggregateOperation;
  stateIds: string[];
}

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

/**
 * Over the values another state received in the current calendar period (in the account's time
 * zone); `previous-*` periods give the value of the last complete period. `count` is 0 for an
 * empty period, never null; `difference` is the period's last value minus the previous period's.
 */
export interface TimeAggregatedSource {
  type: 'time-aggregated';
  stateId: string;
  operation: TimeAggregateOperation;
  period: CalendarPeriod;
}

/** Over the stored time series of another state, in a sliding window, recomputed every interval. */
export interface TimeseriesAggregateSource {
  type: 'timeseries-aggregate';
  stateId: string;
  operation: Exclude<TimeAggregateOperation, 'difference'>;
  windowSeconds: number;
  intervalSeconds: number;
}

/** A uniform random number in [min, max], drawn every interval (demos, tests, simulations). */
export interface RandomSource {
  type: 'random';
  min: number;
  max: number;
  intervalSeconds: number;
  /** Digits after the decimal point; 0 gives integers. */
  decimals?: number;
}

/** A boolean switched by users (twin-button tile, PUT) or rules; starts at `initial`. */
export interface BooleanSource {
  type: 'boolean';
  initial?: boolean;
}

/** A value of a legacy IoT hub device (hub API), by the hub device's id and value key. */
export interface HubSource {
  type: 'hub';
  deviceId: string;
  stateKey: string;
}

export type StateSource =
  | ConnectorSource
  | DynamicRoutingSource
  | AggregateSource
  | TimeAggregatedSource
  | TimeseriesAggregateSource
  | RandomSource
  | BooleanSource
  | HubSource;

export type StateSourceType = StateSource['type'];

export const STATE_SOURCE_TYPES: readonly StateSourceType[] = [
  'connector',
  'dynamic-routing',
  'aggregate',
  'timeseries-aggregate',
  'time-aggregated',
  'random',
  'boolean',
  'hub',
];

/** Ids of the states a source reads (edges of the dependency graph; no cycles allowed). */
export function sourceStateIds(source: StateSource | null): string[] {
  if (!source) return [];
  switch (source.type) {
    case 'aggregate':
      return source.stateIds;
    case 'time-aggregated':
    case 'timeseries-aggregate':
      return [source.stateId];
    default:
      return [];
  }
}
