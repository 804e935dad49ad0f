import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

/** Largest sample payload the parser test accepts (decoded bytes). */
export const MAX_SAMPLE_BYTES = 64 * 1024;

export const ParserConfigSchema = Type.Object(
  {
    type: Type.String({
      minLength: 1,
      maxLength: 40,
      description: 'json (default), cbor, binary or javascript; the other properties are its settings',
    }),
  },
  {
    additionalProperties: true,
    description:
      'binary: `{fields: [{key, offset, type, endian?, scale?, add?, bit?}]}`; ' +
      'javascript: `{code, timeoutMs?, memoryLimitMb?, stackLimitKb?, variables?}` where `code` (up to 1 MiB) ' +
      'is a TS013 codec (`decodeUplink(input)`, optionally `encodeDownlink`/`decodeDownlink`) or `parse(bytes, meta)`, or a ChirpStack v3 `Decode(fPort, bytes, variables)` / The Things Network V2 `Decoder(bytes, port)` with their `Encode`/`Encoder`',
  },
);

export const ValueTypeSchema = Type.Union([
  Type.Literal('number'),
  Type.Literal('boolean'),
  Type.Literal('string'),
  Type.Literal('object'),
]);

export const TargetVariableSchema = Type.Object(
  {
    key: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: '^[^_\\s]',
      description: 'State key; keys starting with `_` are reserved (`_raw`, `_parsed`)',
    }),
    type: ValueTypeSchema,
    unit: Type.Optional(Type.String({ maxLength: 50, examples: ['m³/h'] })),
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

const TargetVariables = Type.Array(TargetVariableSchema, { maxItems: 200 });

export const HealthRuleSchema = Type.Object(
  {
    state: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'A target variable key, `_parsed` or `_raw`',
    }),
    operator: Type.String({
      minLength: 1,
      maxLength: 20,
      description:
        'number: < <= > >= == != between; boolean: == != isTrue isFalse; string: == != contains matches; ' +
        'object (`_parsed`): hasKey; any: exists missing',
    }),
    value: Type.Optional(Type.Unknown()),
    result: Type.String({
      minLength: 1,
      maxLength: 50,
      description: 'Health state set when the rule matches',
    }),
  },
  { additionalProperties: false },
);

export const HealthConfigSchema = Type.Object(
  {
    rules: Type.Array(HealthRuleSchema, { maxItems: 100 }),
    silentAfterSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 366 * 24 * 3600 })),
    alarmOnChange: Type.Optional(
      Type.Boolean({ description: 'A health change writes an alarm log entry (category `Gerätezustand`)' }),
    ),
  },
  { additionalProperties: false },
);

const Title = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 2000 });
const Shared = Type.Boolean({
  description: 'Offered (read-only) to the sub-accounts of the owning account',
});

export const DriverCreate = Type.Object(
  {
    title: Title,
    description: Type.Optional(Description),
    shared: Type.Optional(Shared),
    parser: Type.Optional(ParserConfigSchema),
    targetVariables: Type.Optional(TargetVariables),
    healthConfig: Type.Optional(HealthConfigSchema),
    accountId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const DriverUpdate = Type.Object(
  {
    title: Type.Optional(Title),
    description: Type.Optional(Description),
    shared: Type.Optional(Shared),
    parser: Type.Optional(ParserConfigSchema),
    targetVariables: Type.Optional(TargetVariables),
    healthConfig: Type.Optional(HealthConfigSchema),
  },
  { additionalProperties: false },
);

export const DriverReply = Type.Object({
  id: Uuid,
  accountId: Type.Union([Uuid, Type.Null()], {
    description: 'null for shared drivers of an account above yours',
  }),
  title: Type.String(),
  description: Type.String(),
  shared: Type.Boolean(),
  parser: ParserConfigSchema,
  targetVariables: Type.Array(TargetVariableSchema),
  healthConfig: HealthConfigSchema,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const DriverListQuery = Type.Object(
  { ...ListQuery, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

export const SamplePayload = Type.Union(
  [
    Type.Object(
      { json: Type.Unknown({ description: 'Sent as its JSON text' }) },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        base64: Type.String({
          maxLength: Math.ceil(MAX_SAMPLE_BYTES / 3) * 4,
          pattern: '^[A-Za-z0-9+/_=-]*$',
        }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      { hex: Type.String({ maxLength: MAX_SAMPLE_BYTES * 3, pattern: '^[0-9A-Fa-f\\s]*$' }) },
      { additionalProperties: false },
    ),
  ],
  { description: 'The sample packet: JSON, base64 or hex (whitespace between hex bytes allowed)' },
);

const Meta = Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), {
  description:
    'Passed as `meta` to a javascript parser (e.g. `{deviceKey}`); a TS013 codec gets `fPort`, `recvTime` ' +
    'and `variables` from it',
});

export const DriverTestBody = Type.Object(
  { payload: SamplePayload, meta: Type.Optional(Meta) },
  { additionalProperties: false },
);

export const ParserTestBody = Type.Object(
  {
    parser: ParserConfigSchema,
    targetVariables: Type.Optional(TargetVariables),
    payload: SamplePayload,
    meta: Type.Optional(Meta),
  },
  { additionalProperties: false },
);

export const ParserTestReply = Type.Object({
  values: Type.Array(Type.Object({}, { additionalProperties: true }), {
    description: 'One item for an object payload, up to 50 for an array payload',
  }),
  warnings: Type.Array(Type.String(), { description: 'Values that do not fit their target variable type' }),
  states: Type.Array(Type.Object({}, { additionalProperties: true }), {
    description:
      'The device states of each item: nested values under dotted keys (`battery.voltage`, `readings.0.value`)',
  }),
  codecWarnings: Type.Array(Type.String(), {
    description: 'The `warnings` a TS013 codec returned; ingest keeps them on the packet',
  }),
  errors: Type.Array(Type.String(), {
    description: 'The `errors` a TS013 codec returned; ingest marks such a packet failed with them',
  }),
  logs: Type.Array(Type.String(), { description: "The script's console.log lines" }),
});

export const EncodeDownlinkBody = Type.Object(
  {
    data: Type.Unknown({ description: "`input.data` of the codec's encodeDownlink" }),
    meta: Type.Optional(Meta),
  },
  { additionalProperties: false },
);

export const EncodeDownlinkReply = Type.Object({
  bytes: Type.Array(Type.Integer({ minimum: 0, maximum: 255 })),
  hex: Type.String(),
  fPort: Type.Union([Type.Integer({ minimum: 1, maximum: 223 }), Type.Null()], {
    description: 'The fPort the codec chose; null when it left it to the sender',
  }),
  warnings: Type.Array(Type.String()),
  logs: Type.Array(Type.String(), { description: "The script's console.log lines" }),
});
