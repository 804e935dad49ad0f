/**
 * Turns the server's OpenAPI 3.1 document into TypeScript types for the console: one entry per
 * operation (`'GET /xapi/v1/digital-twins/{id}'`) with its path parameters, query, body and reply.
 * Written here because openapi-typescript needs TypeScript 5; the schemas come from TypeBox, so the
 * subset of JSON Schema handled below is the subset the server produces.
 */

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  patternProperties?: Record<string, JsonSchema>;
  items?: JsonSchema | JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  $ref?: string;
  nullable?: boolean;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: JsonSchema;
}

interface Operation {
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const key = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name));
const union = (parts: string[]) => [...new Set(parts)].join(' | ') || 'never';

/** The TypeScript type of one JSON schema; `refs` resolves `#/components/schemas/<name>`. */
export function schemaToType(schema: JsonSchema | undefined, refs: Record<string, JsonSchema> = {}): string {
  if (!schema || typeof schema !== 'object') return 'unknown';
  if (schema.$ref) {
    const name = schema.$ref.split('/').pop() ?? '';
    return name in refs ? schemaToType(refs[name], refs) : 'unknown';
  }
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return union(schema.enum.map((v) => JSON.stringify(v)));
  if (schema.anyOf) return union(schema.anyOf.map((s) => wrap(schemaToType(s, refs))));
  if (schema.oneOf) return union(schema.oneOf.map((s) => wrap(schemaToType(s, refs))));
  if (schema.allOf) return schema.allOf.map((s) => wrap(schemaToType(s, refs))).join(' & ') || 'unknown';
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const base =
    types.length === 0
      ? schema.properties
        ? objectType(schema, refs)
        : 'unknown'
      : union(types.map((t) => primitive(t, schema, refs)));
  return schema.nullable ? `${wrap(base)} | null` : base;
}

const wrap = (type: string) => (/[|&]/.test(type) && !/^\{[\s\S]*\}$/.test(type) ? `(${type})` : type);

function primitive(type: string, schema: JsonSchema, refs: Record<string, JsonSchema>): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      if (Array.isArray(schema.items))
        return `[${schema.items.map((s) => schemaToType(s, refs)).join(', ')}]`;
      return `${wrap(schemaToType(schema.items, refs))}[]`;
    }
    case 'object':
      return objectType(schema, refs);
    default:
      return 'unknown';
  }
}

function objectType(schema: JsonSchema, refs: Record<string, JsonSchema>): string {
  const required = new Set(schema.required ?? []);
  const members = Object.entries(schema.properties ?? {}).map(
    ([name, property]) => `${key(name)}${required.has(name) ? '' : '?'}: ${schemaToType(property, refs)};`,
  );
  const extra = extraPropertiesType(schema, refs);
  if (members.length === 0) return extra ? `Record<string, ${extra}>` : 'Record<string, never>';
  const literal = `{ ${members.join(' ')} }`;
  // Named members keep their types; any other key is allowed but unknown.
  return extra ? `${literal} & Record<string, unknown>` : literal;
}

function extraPropertiesType(schema: JsonSchema, refs: Record<string, JsonSchema>): string | undefined {
  if (schema.patternProperties) {
    return union(Object.values(schema.patternProperties).map((s) => wrap(schemaToType(s, refs))));
  }
  if (schema.additionalProperties === false) return undefined;
  if (typeof schema.additionalProperties === 'object') return schemaToType(schema.additionalProperties, refs);
  // JSON Schema's default is "anything else allowed"; TypeBox objects say false when they mean it.
  return schema.properties ? undefined : 'unknown';
}

const jsonSchemaOf = (content: Record<string, { schema?: JsonSchema }> | undefined) =>
  content?.['application/json']?.schema;

function parametersType(parameters: Parameter[], where: 'path' | 'query', refs: Record<string, JsonSchema>) {
  const own = parameters.filter((p) => p.in === where);
  if (own.length === 0) return 'never';
  const members = own.map(
    (p) => `${key(p.name)}${p.required || where === 'path' ? '' : '?'}: ${schemaToType(p.schema, refs)};`,
  );
  return `{ ${members.join(' ')} }`;
}

function replyType(operation: Operation, refs: Record<string, JsonSchema>): string {
  const success = Object.entries(operation.responses ?? {}).filter(([status]) => /^2\d\d$/.test(status));
  if (success.length === 0) return 'unknown';
  return union(
    success.map(([status, response]) => {
      if (status === '204') return 'null';
      const schema = jsonSchemaOf(response.content);
      return schema ? wrap(schemaToType(schema, refs)) : 'unknown';
    }),
  );
}

/** The generated module's text (unformatted; the caller runs prettier over it). */
export function generateApiTypes(doc: OpenApiDocument): string {
  const refs = doc.components?.schemas ?? {};
  const entries: string[] = [];
  for (const route of Object.keys(doc.paths).sort()) {
    const item = doc.paths[route] ?? {};
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const parameters = operation.parameters ?? [];
      const body = jsonSchemaOf(operation.requestBody?.content);
      const summary = operation.summary ? `/** ${operation.summary.replace(/\*\//g, '* /')} */\n` : '';
      entries.push(
        `${summary}${JSON.stringify(`${method.toUpperCase()} ${route}`)}: {
          path: ${parametersType(parameters, 'path', refs)};
          query: ${parametersType(parameters, 'query', refs)};
          body: ${body ? schemaToType(body, refs) : 'never'};
          reply: ${replyType(operation, refs)};
        };`,
      );
    }
  }
  return `// Generated by \`npm run gen:api\` from /xapi/v1/openapi.json. Do not edit: a unit test fails when it is stale.

/** Every operation of the server's HTTP API: path parameters, query, JSON body and success reply. */
export interface ApiOperations {
${entries.join('\n')}
}

export type OperationKey = keyof ApiOperations;
export type PathParams<K extends OperationKey> = ApiOperations[K]['path'];
export type Query<K extends OperationKey> = ApiOperations[K]['query'];
export type Body<K extends OperationKey> = ApiOperations[K]['body'];
export type Reply<K extends OperationKey> = ApiOperations[K]['reply'];
`;
}
