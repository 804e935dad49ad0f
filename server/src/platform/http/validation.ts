import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

/**
 * Query strings and path parameters arrive as text and are coerced; bodies are not, so
 * `"12"` for an integer field is a VALIDATION_ERROR rather than silently accepted. Unknown
 * body properties are dropped (a payload read back from the API is accepted as is).
 */
export function registerValidation(app: FastifyInstance): void {
  const common = { useDefaults: true, allErrors: false, strict: false, removeAdditional: true } as const;
  const strict = addFormats.default(new Ajv.default({ ...common, coerceTypes: false }));
  const coercing = addFormats.default(new Ajv.default({ ...common, coerceTypes: 'array' }));
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? strict : coercing).compile(schema),
  );
}
