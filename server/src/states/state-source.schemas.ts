import { Type, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import Value from 'typebox/value';
import { errors } from '../platform/errors.js';
import {
  AGGREGATE_OPERATIONS,
  CALENDAR_PERIODS,
  STATE_SOURCE_TYPES,
  TIME_AGGREGATE_OPERATIONS,
  type StateSource,
  type StateSourceType,
} from './state-source.js';

/**
 * The shape of each `source.type` (state-source.ts), checked by the service rather than the route
 * schema: a union in the route schema would answer "must match a schema in anyOf" and, with
 * removeAdditional, strip properties of the wrong branch. Here the error names the exact path.
 */

const Id = Type.String({ format: 'uuid' });
const StateKey = Type.String({ minLength: 1, maxLength: 200 });
const oneOf = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));
/** Engine timers below a second would only burn CPU; above a day nobody waits for them. */
export const MAX_INTERVAL_SECONDS = 86_400;
/** A sliding window of at most a year over the stored series. */
export const MAX_WINDOW_SECONDS = 366 * 86_400;
export const MAX_AGGREGATED_STATES = 100;
const Seconds = (max: number) => Type.Integer({ minimum: 1, maximum: max });

const SOURCE_SCHEMAS: Record<StateSourceType, TSchema> = {
  connector: Type.Object({
    type: Type.Literal('connector'),
    connectorId: Id,
    deviceId: Id,
    stateKey: StateKey,
  }),
  'dynamic-routing': Type.Object({ type: Type.Literal('dynamic-routing'), stateKey: StateKey }),
  aggregate: Type.Object({
    type: Type.Literal('aggregate'),
    operation: oneOf(AGGREGATE_OPERATIONS),
    stateIds: Type.Array(Id, { minItems: 1, maxItems: MAX_AGGREGATED_STATES, uniqueItems: true }),
  }),
  'time-aggregated': Type.Object({
    type: Type.Literal('time-aggregated'),
    stateId: Id,
    operation: oneOf(TIME_AGGREGATE_OPERATIONS),
    period: oneOf(CALENDAR_PERIODS),
  }),
  'timeseries-aggregate': Type.Object({
    type: Type.Literal('timeseries-aggregate'),
    stateId: Id,
    operation: oneOf(TIME_AGGREGATE_OPERATIONS.filter((o) => o !== 'difference')),
    windowSeconds: Seconds(MAX_WINDOW_SECONDS),
    intervalSeconds: Seconds(MAX_INTERVAL_SECONDS),
  }),
  random: Type.Object({
    type: Type.Literal('random'),
    min: Type.Number(),
    max: Type.Number(),
    intervalSeconds: Seconds(MAX_INTERVAL_SECONDS),
    decimals: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
  }),
  boolean: Type.Object({ type: Type.Literal('boolean'), initial: Type.Optional(Type.Boolean()) }),
  hub: Type.Object({ type: Type.Literal('hub'), deviceId: Id, stateKey: StateKey }),
};

const CHECKERS = Object.fromEntries(
  Object.entries(SOURCE_SCHEMAS).map(([type, schema]) => [type, Compile(schema)]),
) as Record<StateSourceType, ReturnType<typeof Compile>>;

interface Problem {
  path: string;
  message: string;
}

const invalid = (problems: Problem[]) =>
  errors.validation(
    `Invalid source: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
    problems.map((p) => ({ location: 'body', ...p })),
  );

/**
 * A request's `source` as a StateSource: the shape of its type (unknown properties dropped, as
 * for every body) and the rules a schema cannot say. Throws VALIDATION_ERROR naming `/source/…`.
 * References (connectors, devices, states) are checked by the service against the database.
 */
export function parseStateSource(input: unknown): StateSource | null {
  if (input === null || input === undefined) return null;
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw invalid([{ path: '/source', message: 'must be an object or null' }]);
  }
  const type = (input as { type?: unknown }).type;
  if (typeof type !== 'string' || !(STATE_SOURCE_TYPES as readonly string[]).includes(type)) {
    throw invalid([{ path: '/source/type', message: `must be one of ${STATE_SOURCE_TYPES.join(', ')}` }]);
  }
  const schema = SOURCE_SCHEMAS[type as StateSourceType];
  const checker = CHECKERS[type as StateSourceType];
  const source = Value.Clean(schema, structuredClone(input));
  if (!checker.Check(source)) {
    const problems = [...checker.Errors(source)]
      // Object-level "additionalProperties" noise cannot occur after Clean; keep the precise ones.
      .filter((e) => e.keyword !== 'boolean')
      .map((e) => ({ path: `/source${e.instancePath}`, message: e.message }));
    throw invalid(problems);
  }
  const parsed = source as StateSource;
  const problems = semanticProblems(parsed);
  if (problems.length > 0) throw invalid(problems);
  return parsed;
}

function semanticProblems(source: StateSource): Problem[] {
  switch (source.type) {
    case 'aggregate':
      return source.operation === 'difference' && source.stateIds.length !== 1
        ? [{ path: '/source/stateIds', message: 'difference takes exactly one state' }]
        : [];
    case 'random':
      return source.min > source.max
        ? [{ path: '/source/min', message: 'must not be greater than max' }]
        : [];
    default:
      return [];
  }
}
