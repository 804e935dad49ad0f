/**
 * A request part that failed its route schema, as the VALIDATION_ERROR body tells it: one detail per
 * problem with Ajv's `keyword` and `params` (clients word it in their language from these), the
 * path of the field it concerns, and an English message a person can read.
 */

/** What Fastify hands over per Ajv error (`error.validation`). */
export interface SchemaError {
  keyword: string;
  instancePath?: string;
  schemaPath?: string;
  params?: Record<string, unknown>;
  message?: string;
}

export interface ValidationDetail {
  /** `body`, `querystring`, `params` or `headers`. */
  location: string | undefined;
  /** JSON pointer of the field; for `required` the missing property itself. */
  path: string;
  keyword: string;
  message: string;
  params: Record<string, unknown>;
}

const TYPE_NAMES: Record<string, string> = {
  number: 'a number',
  integer: 'an integer',
  string: 'text',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

/** English names of formats: Ajv's and the server's own (console: en.schema-problems.ts `formats`). */
export const FORMAT_NAMES: Record<string, string> = {
  'date-time': 'a date and time (ISO 8601)',
  date: 'a date (YYYY-MM-DD)',
  time: 'a time of day',
  duration: 'a duration (ISO 8601)',
  uri: 'a URL',
  'uri-reference': 'a URL',
  url: 'a URL',
  email: 'an e-mail address',
  uuid: 'a UUID',
  hostname: 'a host name',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  regex: 'a regular expression',
  'json-pointer': 'a JSON pointer such as /device/id',
  // The server's own formats (problem-detail.ts): checks no Ajv format makes.
  'http-url': 'an http:// or https:// URL',
  'mqtt-url': 'an mqtt://, mqtts://, ws:// or wss:// URL with a host',
  'ws-url': 'a ws:// or wss:// URL with a host',
  'opcua-url': 'an opc.tcp://host:port URL',
  host: 'a host name or an IP address',
  'host-port': 'host:port',
  ip: 'an IP address',
  pem: 'PEM text (-----BEGIN …-----)',
  'sha256-fingerprint': 'the 64 hex digits of a SHA-256 fingerprint',
  'opcua-node-id': 'an OPC UA node id such as ns=2;s=Boiler.Temperature or i=2258',
  'mqtt-topic': 'an MQTT topic without wildcards (+, #)',
  'mqtt-topic-filter': 'an MQTT topic filter',
  'mqtt-topic-level': 'one MQTT topic level (no /, + or #)',
  'mail-from': 'an address or Name <address>',
  'lwm2m-path': 'an LwM2M path such as 3303/0/5700',
  'time-zone': 'an IANA time zone such as Europe/Berlin',
  'map-style-url': 'an http(s) URL or a path on this server',
};

const entries = (n: unknown) => (n === 1 ? '1 entry' : `${String(n)} entries`);
const properties = (n: unknown) => (n === 1 ? '1 field' : `${String(n)} fields`);
const characters = (n: unknown) => (n === 1 ? '1 character' : `${String(n)} characters`);
const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
const either = (names: string[]) =>
  names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)!}` : (names[0] ?? '');

/**
 * The English problem of one schema error or server check (problem-detail.ts), without the field's
 * name; Ajv's own text for the rest.
 */
export function problemText(keyword: string, params: Record<string, unknown>, fallback: string): string {
  const { limit } = params;
  switch (keyword) {
    case 'required':
      return 'is required';
    case 'minLength':
      return limit === 1 ? 'must not be empty' : `must have at least ${characters(limit)}`;
    case 'maxLength':
      return `must have at most ${characters(limit)}`;
    case 'minimum':
      return `must be at least ${String(limit)}`;
    case 'maximum':
      return `must be at most ${String(limit)}`;
    case 'exclusiveMinimum':
      return `must be greater than ${String(limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(limit)}`;
    case 'multipleOf':
      return `must be a multiple of ${String(params.multipleOf)}`;
    case 'type': {
      const types = (Array.isArray(params.type) ? params.type : String(params.type).split(',')) as string[];
      return `must be ${either(types.map((type) => TYPE_NAMES[type] ?? type))}`;
    }
    case 'format': {
      const format = String(params.format);
      return `must be ${FORMAT_NAMES[format] ?? `in the format "${format}"`}`;
    }
    case 'enum':
      return `must be one of: ${(params.allowedValues as unknown[]).map(shown).join(', ')}`;
    case 'const':
      return `must be ${shown(params.allowedValue)}`;
    case 'pattern':
      return `must match the pattern ${String(params.pattern)}`;
    case 'minItems':
      return limit === 1 ? 'must not be empty' : `must have at least ${entries(limit)}`;
    case 'maxItems':
      return `must have at most ${entries(limit)}`;
    case 'uniqueItems':
      return 'must not contain the same entry twice';
    case 'additionalProperties':
      return `must not contain "${String(params.additionalProperty)}"`;
    case 'minProperties':
      return limit === 1 ? 'must not be empty' : `must have at least ${properties(limit)}`;
    case 'maxProperties':
      return `must have at most ${properties(limit)}`;
    case 'dependentRequired':
      return `${String(params.missingProperty)} is required with ${String(params.property)}`;
    case 'notFound':
      return 'was not found';
    case 'unique':
      return 'must be unique';
    case 'cron':
      return 'is not a valid cron expression';
    default:
      return fallback;
  }
}

/** A choice (`anyOf`/`oneOf`) comes from Ajv as each branch's error, then the choice's own. */
const isChoice = (error: SchemaError) => error.keyword === 'anyOf' || error.keyword === 'oneOf';
const isNullType = (error: SchemaError) => error.keyword === 'type' && error.params?.type === 'null';
/**
 * How far into the value a branch got before it failed: deeper is further, and at one depth a
 * missing property or a wrong constant (a discriminator such as `type`) says "another branch".
 */
const reach = (error: SchemaError) =>
  (error.instancePath ?? '').split('/').length * 2 + (['required', 'const'].includes(error.keyword) ? 0 : 1);

function pathOf(error: SchemaError): string {
  const path = error.instancePath ?? '';
  return error.keyword === 'required' ? `${path}/${String(error.params?.missingProperty)}` : path;
}

/**
 * One error for a failed choice and its branches: a choice of constants (TypeBox's union of
 * literals) reads as `enum`, a choice of types as one `type`; otherwise the branch that got
 * furthest into the value (the others failed at their discriminator), never the `null` branch
 * that makes a field nullable.
 */
function mergeChoice(choice: SchemaError, branches: SchemaError[]): SchemaError {
  const at = choice.instancePath;
  if (branches.length && branches.every((b) => b.keyword === 'type' && b.instancePath === at))
    return {
      ...choice,
      keyword: 'type',
      params: { type: [...new Set(branches.flatMap((b) => b.params?.type))] },
    };
  const others = branches.filter((b) => !isNullType(b));
  if (others.length && others.every((b) => b.keyword === 'const' && b.instancePath === at))
    return {
      ...choice,
      keyword: 'enum',
      params: { allowedValues: others.map((b) => b.params?.allowedValue) },
    };
  const furthest = others.reduce<SchemaError | undefined>(
    (best, b) => (!best || reach(b) > reach(best) ? b : best),
    undefined,
  );
  return furthest ?? choice;
}

/** Ajv's errors with each choice folded into one, innermost first (a choice's branches precede it). */
function foldChoices(errors: readonly SchemaError[]): SchemaError[] {
  const folded: SchemaError[] = [];
  for (const error of errors) {
    if (!isChoice(error) || !error.schemaPath) {
      folded.push(error);
      continue;
    }
    const prefix = `${error.schemaPath}/`;
    const branches = folded.filter((e) => e.schemaPath?.startsWith(prefix));
    const kept = folded.filter((e) => !e.schemaPath?.startsWith(prefix));
    // The merged error stands where the choice is in the schema, so an outer choice folds it too.
    kept.push({ ...mergeChoice(error, branches), schemaPath: error.schemaPath });
    folded.splice(0, folded.length, ...kept);
  }
  return folded;
}

/** The VALIDATION_ERROR details of Ajv's errors for one request part. */
export function validationDetails(
  errors: readonly SchemaError[],
  location: string | undefined,
): ValidationDetail[] {
  return foldChoices(errors).map((error) => {
    const params = error.params ?? {};
    return {
      location,
      path: pathOf(error),
      keyword: error.keyword,
      message: problemText(error.keyword, params, error.message ?? 'is invalid'),
      params,
    };
  });
}

/** `/trigger/conditions/0/value` → `trigger.conditions[0].value`; the part's name for its root. */
function fieldName(path: string, location: string | undefined): string {
  const segments = path.split('/').slice(1);
  if (segments.length === 0) return location ?? 'request';
  return segments
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce(
      (name, segment) =>
        /^\d+$/.test(segment) ? `${name}[${segment}]` : name ? `${name}.${segment}` : segment,
      '',
    );
}

/** The error's English message: `Invalid body: title must not be empty`. */
export function validationMessage(
  details: readonly ValidationDetail[],
  location: string | undefined,
): string {
  const problems = [...new Set(details.map((d) => `${fieldName(d.path, location)} ${d.message}`))];
  return `Invalid ${location ?? 'request'}${problems.length ? `: ${problems.join('; ')}` : ''}`;
}
