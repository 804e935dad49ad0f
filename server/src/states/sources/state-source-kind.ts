import type { TObject } from 'typebox';
import type { AggregateOperation } from './aggregate.source.js';
import type { CalendarPeriod, TimeAggregateOperation } from './time-aggregated.source.js';
import type { CheckProblem } from '../../platform/http/problem-detail.js';

/**
 * A data-state source as one self-describing module (docs/adr/0074-connector-kind-descriptors.md),
 * like connector kinds (connectors/connector-kind.ts): request validation, the OpenAPI, the
 * dependency graph, what users may set and the console's form derive from it. It needs no server,
 * so docs and the console catalogue (`GET /xapi/v1/state-sources`) can read it.
 */

/** A problem with a source's settings, named by its path under `/source` (problem-detail.ts). */
export type SourceProblem = CheckProblem;

/**
 * How the console edits a setting, where the schema's type is not enough: `choice` is a select of
 * the schema's constants, `state`/`states` pick states of the twin, `connector`/`device` pick a
 * connector and one of its devices.
 */
export const SOURCE_FIELD_WIDGETS = [
  'text',
  'number',
  'choice',
  'checkbox',
  'state',
  'states',
  'connector',
  'device',
] as const;
export type SourceFieldWidget = (typeof SOURCE_FIELD_WIDGETS)[number];

export interface SourceField {
  /** A top-level property of `settings` (never `type`). */
  key: string;
  widget: SourceFieldWidget;
}

/**
 * The computations the state engine (states/engine/) knows, each with the settings it needs. A
 * source picks one with `compute`; its settings must have that shape (the type system checks it).
 * - `states`: over the current values of the states in `stateIds` whenever one changes
 *   (`difference`: of the last two values the one state received);
 * - `period`: over the values `stateId` receives in a calendar period, rolled over by a timer at
 *   the period's end;
 * - `window`: over `stateId`'s stored time series in a sliding window, by a timer every interval;
 * - `draw`: a uniform random number in [min, max], by a timer every interval.
 */
export interface SourceComputations {
  states: { stateIds: string[]; operation: AggregateOperation };
  period: { stateId: string; operation: TimeAggregateOperation; period: CalendarPeriod };
  window: {
    stateId: string;
    operation: Exclude<TimeAggregateOperation, 'difference'>;
    windowSeconds: number;
    intervalSeconds: number;
  };
  draw: { min: number; max: number; intervalSeconds: number; decimals?: number };
}
export type SourceCompute = keyof SourceComputations;

/**
 * How device updates reach a source, with the settings the state engine's routing reads:
 * `device` by (`deviceId`, `stateKey`), `reference` by the twin's reference id (a device with the
 * same reference id in the account) and `stateKey`.
 */
export interface SourceRoutings {
  device: { deviceId: string; stateKey: string };
  reference: { stateKey: string };
}
export type SourceRouting = keyof SourceRoutings;

/** The keys of `shapes` whose shape `S` has; every key for the registry's view of any source. */
type Fitting<S extends { type: string }, Shapes> = string extends S['type']
  ? keyof Shapes
  : { [K in keyof Shapes]: S extends Shapes[K] ? K : never }[keyof Shapes];

export interface StateSourceDescriptor<S extends { type: string } = { type: string }> {
  type: S['type'];
  /** One sentence for docs and the console's choice. */
  summary: string;
  /** The whole `source` object, `type` included as a constant; unknown properties are dropped. */
  settings: TObject;
  /** Rules the schema cannot express (cross-field); paths start with `/source`. */
  check?(source: S): SourceProblem[];
  /** The setting naming the states this source reads: edges of the dependency graph (no cycles). */
  reads?: 'stateId' | 'stateIds';
  /**
   * The virtual device the source reads, checked to exist and be visible (`deviceId`):
   * `connector` also checks that the device is on `connectorId`.
   */
  device?: 'any' | 'connector';
  /** Users and rules set the value (PUT, twin button); every other source computes it. */
  settable: boolean;
  /** The value type a state with this source gets when the request names none. */
  valueType?: 'boolean';
  /** The value a new state starts with. */
  initial?(source: S): unknown;
  /** The `aggregate-trigger` rule command may recompute it now (a `states` or `period` computation). */
  recomputable?: boolean;
  /** Devices feed it (a source that is not `settable` has either this or `compute`). */
  routing?: Fitting<S, SourceRoutings>;
  /** The state engine computes it, over other states or with time. */
  compute?: Fitting<S, SourceComputations>;
  /** The console's fields, in order. */
  form: readonly SourceField[];
}

/** Keeps a descriptor's callbacks typed by its own source shape while the registry holds them all. */
export const defineSource = <S extends { type: string }>(
  d: StateSourceDescriptor<S>,
): StateSourceDescriptor<S> => d;
