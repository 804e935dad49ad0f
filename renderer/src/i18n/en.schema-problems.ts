/**
 * What a field's value breaks in its route schema, by Ajv keyword (the VALIDATION_ERROR `details`,
 * docs/api.md); German: de.schema-problems.ts, same keys. Read by lib/format/schema-problem.ts.
 * `one|other` texts take `{count}`.
 */
export const enSchemaProblems = {
  /** A notice line: the field's name from its path, then its problem. */
  field: '{field}: {problem}',
  /** The field name of a problem with the whole request part. */
  request: 'Request',
  required: 'is required',
  notEmpty: 'must not be empty',
  minLength: 'must have at least {count} character|must have at least {count} characters',
  maxLength: 'must have at most {count} character|must have at most {count} characters',
  minimum: 'must be at least {limit}',
  maximum: 'must be at most {limit}',
  exclusiveMinimum: 'must be greater than {limit}',
  exclusiveMaximum: 'must be less than {limit}',
  multipleOf: 'must be a multiple of {limit}',
  type: 'must be {type}',
  /** Joins the last two of several types: "a number or empty". */
  or: 'or',
  types: {
    number: 'a number',
    integer: 'a whole number',
    string: 'text',
    boolean: 'true or false',
    object: 'an object',
    array: 'a list',
    null: 'empty',
  } as Record<string, string>,
  format: 'must be {format}',
  otherFormat: 'must be in the format {format}',
  formats: {
    'date-time': 'a date and time',
    date: 'a date',
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
  } as Record<string, string>,
  enum: 'must be one of: {values}',
  const: 'must be {value}',
  pattern: 'does not have the expected form ({pattern})',
  minItems: 'must have at least {count} entry|must have at least {count} entries',
  maxItems: 'must have at most {count} entry|must have at most {count} entries',
  uniqueItems: 'must not contain the same entry twice',
  additionalProperties: 'must not contain the field {property}',
  /** Field names of the API whose readable form (from camelCase) does not say it well enough. */
  fieldNames: {
    mailTo: 'Recipients',
    intervalSeconds: 'Interval (seconds)',
    windowSeconds: 'Window (seconds)',
    durationSeconds: 'Duration (seconds)',
    silentAfterSeconds: 'Silent after (seconds)',
    offlineAfterSeconds: 'Offline after (seconds)',
    stateKey: 'State',
    device_id: 'Device id',
    eui: 'EUI',
    url: 'URL',
  } as Record<string, string>,
};
