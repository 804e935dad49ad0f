import { Compile } from 'typebox/compile';
import Value from 'typebox/value';
import { errors } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { validationDetails, type SchemaError } from '../platform/http/validation-details.js';
import { STATE_SOURCE_DESCRIPTORS, STATE_SOURCE_TYPES, sourceDescriptor } from './sources/index.js';
import type { SourceProblem, StateSourceDescriptor } from './sources/state-source-kind.js';
import type { StateSource } from './state-source.js';

export { MAX_AGGREGATED_STATES, MAX_INTERVAL_SECONDS, MAX_WINDOW_SECONDS } from './sources/fields.js';

/**
 * The shape of each `source.type` (its descriptor's `settings`, states/sources/), checked by the
 * service rather than the route schema: a union in the route schema would answer "must match a
 * schema in anyOf" and, with removeAdditional, strip properties of the wrong branch. Here the
 * error names the exact path.
 */

const CHECKERS = new Map(
  (STATE_SOURCE_DESCRIPTORS as readonly StateSourceDescriptor[]).map((d) => [d.type, Compile(d.settings)]),
);

const invalid = (problems: SourceProblem[]) =>
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
    throw invalid([problem('/source', 'type', { type: ['object', 'null'] }, 'must be an object or null')]);
  }
  const type = (input as { type?: unknown }).type;
  const descriptor = typeof type === 'string' ? sourceDescriptor(type) : undefined;
  if (!descriptor) {
    throw invalid([
      problem(
        '/source/type',
        'enum',
        { allowedValues: STATE_SOURCE_TYPES },
        `must be one of ${STATE_SOURCE_TYPES.join(', ')}`,
      ),
    ]);
  }
  const checker = CHECKERS.get(descriptor.type)!;
  const source = Value.Clean(descriptor.settings, structuredClone(input));
  if (!checker.Check(source)) {
    // Worded like the route schema's details: a choice of constants as one `enum`, a missing
    // property at its own path.
    const problems = validationDetails(schemaErrors(checker.Errors(source)), 'body').map((d) => ({
      ...d,
      path: `/source${d.path}`,
    }));
    throw invalid(problems);
  }
  const problems = descriptor.check?.(source as StateSource) ?? [];
  if (problems.length > 0) throw invalid(problems);
  return source as StateSource;
}

/**
 * TypeBox's errors as Ajv's (validation-details.ts reads those): one `required` per missing
 * property, as Ajv reports it. Object-level "boolean" noise cannot occur after Clean; dropped.
 */
function schemaErrors(errors: Iterable<SchemaError & { params: object }>): SchemaError[] {
  return [...errors]
    .filter((e) => e.keyword !== 'boolean')
    .flatMap((e) => {
      const { requiredProperties } = e.params as { requiredProperties?: string[] };
      if (e.keyword !== 'required' || !requiredProperties) return [e];
      return requiredProperties.map((missingProperty) => ({ ...e, params: { missingProperty } }));
    });
}
