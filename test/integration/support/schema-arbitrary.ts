import fc from 'fast-check';
import type { JsonSchema } from './schema-sample.js';

/** Serialised as a bare `1e400` (JSON.stringify cannot write a number beyond double range). */
export const HUGE_NUMBER = '__STELLWERK_HUGE_NUMBER__';

/** Values every schema position may receive instead of what it asks for. */
export const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.constant(HUGE_NUMBER),
  fc.constantFrom(Number.MAX_VALUE, -Number.MAX_VALUE, 2 ** 63, -(2 ** 63), 1e-320, -0, 0.1),
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    '\ud800',
    '%00',
    '../../etc/passwd',
    "'; DROP TABLE users; --",
    '{{7*7}}',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ minLength: 3000, maxLength: 5000 }),
  fc.constant(JSON.parse('{"__proto__":{"polluted":true}}')),
  fc.constant(JSON.parse('{"constructor":{"prototype":{"polluted":true}}}')),
  fc.constant(nest(60)),
  fc.array(fc.anything(), { maxLength: 5 }),
  fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue(), { maxKeys: 5 }),
  fc.boolean(),
  fc.integer(),
);

function nest(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

/** Values shaped by the schema, with a hostile value in any position now and then. */
export function fromSchema(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.jsonValue();
  return fc.oneof({ arbitrary: shaped(schema, depth), weight: 4 }, { arbitrary: hostile, weight: 1 });
}

function shaped(schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants?.length) return fc.oneof(...variants.map((v) => fromSchema(v, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const props = schema.properties ?? {};
      const model = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, fromSchema(v, depth + 1)]));
      return fc.record(model, { requiredKeys: [] }).chain((value) =>
        fc
          .option(fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue(), { maxKeys: 3 }), {
            nil: undefined,
          })
          .map((extra) => ({ ...extra, ...value })),
      );
    }
    case 'array':
      return fc.array(fromSchema(schema.items, depth + 1), { maxLength: 4 });
    case 'string':
      return stringFor(schema);
    case 'integer':
      return fc.oneof(fc.integer(), fc.constantFrom(schema.minimum ?? 0, schema.maximum ?? 1, 2 ** 53 + 2));
    case 'number':
      return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(-1));
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue();
  }
}

function stringFor(schema: JsonSchema): fc.Arbitrary<string> {
  switch (schema.format) {
    case 'uuid':
      return fc.oneof(fc.uuid(), fc.constant('00000000-0000-0000-0000-000000000000'));
    case 'email':
      return fc.oneof(fc.emailAddress(), fc.string({ maxLength: 30 }));
    case 'date-time':
      return fc.oneof(
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        fc.string({ maxLength: 30 }),
      );
  }
  return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 64, 300) });
}

/** JSON text for a generated body, writing the huge-number sentinel as a literal 1e400. */
export const toJsonText = (value: unknown): string =>
  JSON.stringify(value)?.replaceAll(`"${HUGE_NUMBER}"`, '1e400') ?? 'null';

/** Query strings are flat: objects and arrays become text the way a careless client would send them. */
export function toQuery(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [
      k.toWellFormed(),
      (typeof v === 'string' ? v : toJsonText(v)).toWellFormed(),
    ]),
  );
}
