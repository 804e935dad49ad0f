import type { TObject } from 'typebox';

/**
 * A data-state source as one self-describing module (docs/adr/0074-connector-kind-descriptors.md),
 * like connector kinds (connectors/connector-kind.ts): request validation, the OpenAPI, the
 * dependency graph, what users may set and the console's form derive from it. It needs no server,
 * so docs and the console catalogue (`GET /xapi/v1/state-sources`) can read it.
 */

export interface SourceProblem {
  path: string;
  message: string;
}

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
  /** The `aggregate-trigger` rule command may recompute it now. */
  recomputable?: boolean;
  /** The console's fields, in order. */
  form: readonly SourceField[];
}

/** Keeps a descriptor's callbacks typed by its own source shape while the registry holds them all. */
export const defineSource = <S extends { type: string }>(
  d: StateSourceDescriptor<S>,
): StateSourceDescriptor<S> => d;
