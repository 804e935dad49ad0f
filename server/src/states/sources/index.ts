import { aggregateSource } from './aggregate.source.js';
import { booleanSource } from './boolean.source.js';
import { connectorSource } from './connector.source.js';
import { dynamicRoutingSource } from './dynamic-routing.source.js';
import { hubSource } from './hub.source.js';
import { randomSource } from './random.source.js';
import type { SourceComputations, SourceCompute, StateSourceDescriptor } from './state-source-kind.js';
import { timeAggregatedSource } from './time-aggregated.source.js';
import { timeseriesAggregateSource } from './timeseries-aggregate.source.js';

/**
 * Every data-state source: the only list (docs/adr/0074-connector-kind-descriptors.md). Validation,
 * the OpenAPI, the dependency graph, which values users may set and the console's choices derive
 * from it; `StateSource` is the union of their shapes.
 */
export const STATE_SOURCE_DESCRIPTORS = [
  connectorSource,
  dynamicRoutingSource,
  aggregateSource,
  timeseriesAggregateSource,
  timeAggregatedSource,
  randomSource,
  booleanSource,
  hubSource,
] as const;

type SourceOf<D> = D extends StateSourceDescriptor<infer S> ? S : never;

/** Where a data state's value comes from: the shape of one registered source. */
export type StateSource = SourceOf<(typeof STATE_SOURCE_DESCRIPTORS)[number]>;
export type StateSourceType = StateSource['type'];

/** The registry as descriptors of any source (their callbacks take the source they are asked about). */
const ALL = STATE_SOURCE_DESCRIPTORS as readonly StateSourceDescriptor[];
const BY_TYPE = new Map(ALL.map((d) => [d.type, d]));

export const STATE_SOURCE_TYPES = ALL.map((d) => d.type) as readonly StateSourceType[];

/** The descriptor of a source type; undefined for a type no source has. */
export const sourceDescriptor = (type: string): StateSourceDescriptor | undefined => BY_TYPE.get(type);

/** Types of the sources a descriptor property picks, in registry order. */
export const sourceTypesWhere = (pick: (d: StateSourceDescriptor) => boolean): StateSourceType[] =>
  ALL.filter(pick).map((d) => d.type as StateSourceType);

/**
 * Whether the state engine computes `source` with `compute`; narrows it to that computation's
 * settings (which the descriptor's type guarantees).
 */
export const computedBy = <K extends SourceCompute>(
  source: StateSource | null | undefined,
  compute: K,
): source is StateSource & SourceComputations[K] =>
  source != null && BY_TYPE.get(source.type)?.compute === compute;
