/**
 * Where a data state's value comes from (`source.type`, ARCHITECTURE.md section 3). A state without a
 * source holds what `PUT /states/{id}` or a rule sets. Each source is one module under
 * states/sources/ exporting a descriptor; sources/index.ts is the only list. The state engine
 * (states/engine/) evaluates them; the states API validates them (states/state-source.schemas.ts).
 */
import { sourceDescriptor, type StateSource } from './sources/index.js';

export { STATE_SOURCE_TYPES, type StateSource, type StateSourceType } from './sources/index.js';
export type { ConnectorSource } from './sources/connector.source.js';
export type { DynamicRoutingSource } from './sources/dynamic-routing.source.js';
export {
  AGGREGATE_OPERATIONS,
  type AggregateOperation,
  type AggregateSource,
} from './sources/aggregate.source.js';
export {
  CALENDAR_PERIODS,
  TIME_AGGREGATE_OPERATIONS,
  type CalendarPeriod,
  type TimeAggregateOperation,
  type TimeAggregatedSource,
} from './sources/time-aggregated.source.js';
export type { TimeseriesAggregateSource } from './sources/timeseries-aggregate.source.js';
export type { RandomSource } from './sources/random.source.js';
export type { BooleanSource } from './sources/boolean.source.js';
export type { HubSource } from './sources/hub.source.js';

/** Ids of the states a source reads (edges of the dependency graph; no cycles allowed). */
export function sourceStateIds(source: StateSource | null): string[] {
  if (!source) return [];
  const field = sourceDescriptor(source.type)?.reads;
  if (!field) return [];
  const value = (source as unknown as Record<string, unknown>)[field];
  return Array.isArray(value) ? (value as string[]) : [value as string];
}
