import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';

/**
 * Query strings and path parameters arrive as text and are coerced; bodies are not, so
 * `"12"` for an integer field is a VALIDATION_ERROR rather than silently accepted. Unknown
 * body properties are dropped (a payload read back from the API is accepted as is).
 */
const common = { useDefaults: true, allErrors: false, strict: false, removeAdditional: true } as const;
const strict = addFormats.default(new Ajv.default({ ...common, coerceTypes: false }));
const coercing = addFormats.default(new Ajv.default({ ...common, coerceTypes: 'array' }));

/** The validator of one part of a route, as every route gets it (routes with their own compiler reuse it). */
export const compileValidator: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? strict : coercing).compile(schema as object);

export function registerValidation(app: FastifyInstance): void {
  app.setValidatorCompiler(compileValidator);
}
