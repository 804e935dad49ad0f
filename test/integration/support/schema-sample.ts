import { randomUUID } from 'node:crypto';

/** A JSON Schema as TypeBox emits it (only the parts the generators read). */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  const?: unknown;
  enum?: unknown[];
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  pattern?: string;
  default?: unknown;
  patternProperties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
}

/**
 * The smallest value that satisfies a schema: required properties only, unique strings so
 * unique constraints do not collide. Used to build requests that would succeed if tenancy
 * were not enforced.
 */
export function sampleValue(schema: JsonSchema | undefined, name = 'value'): unknown {
  if (!schema) return undefined;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) {
    const nonNull = variants.find((v) => v.type !== 'null') ?? variants[0];
    return sampleValue(nonNull, name);
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) out[key] = sampleValue(schema.properties?.[key], key);
      return out;
    }
    case 'array':
      return [];
    case 'string':
      return sampleString(schema, name);
    case 'integer':
    case 'number':
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return {};
  }
}

function sampleString(schema: JsonSchema, name: string): string {
  const unique = randomUUID().slice(0, 8);
  switch (schema.format) {
    case 'email':
      return `${name.toLowerCase()}-${unique}@example.test`;
    case 'uuid':
      return randomUUID();
    case 'date-time':
      return new Date().toISOString();
    case 'uri':
      return `https://example.test/${unique}`;
  }
  if (/password/i.test(name)) return `pw-${unique}-long-enough`;
  const text = `${name}-${unique}`;
  const min = schema.minLength ?? 0;
  const padded = text.length < min ? text.padEnd(min, 'x') : text;
  return schema.maxLength !== undefined ? padded.slice(0, schema.maxLength) : padded;
}
