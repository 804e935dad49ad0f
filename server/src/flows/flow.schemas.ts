import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';
import { FILTER_INPUT_TYPES } from './flow.entities.js';
import { SCRIPT_TEMPLATES, MAX_FLOW_SCRIPT_LENGTH } from './flow-scripts.js';

const Title = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 5000 });

// One object, not a union of two: AJV's removeAdditional would strip one variant's fields while trying the other.
const Source = Type.Object(
  {
    type: Type.Union([Type.Literal('packets'), Type.Literal('alarms')], {
      description:
        'packets: packets of the account (all devices when connectorIds and deviceIds are empty); alarms: alarm log entries',
    }),
    connectorIds: Type.Optional(
      Type.Array(Uuid, { maxItems: 50, description: 'packets: arriving through these connectors' }),
    ),
    deviceIds: Type.Optional(Type.Array(Uuid, { maxItems: 500, description: 'packets: of these devices' })),
    categories: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        maxItems: 20,
        description: 'alarms: of these categories (all when none)',
      }),
    ),
  },
  { additionalProperties: false },
);

const Step = Type.Object(
  { type: Type.Union([Type.Literal('filter'), Type.Literal('transformer')]), id: Uuid },
  { additionalProperties: false },
);

const Target = Type.Object(
  {
    connectorId: Uuid,
    topic: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 500,
        description: 'MQTT or Kafka topic instead of the connector default',
      }),
    ),
    subject: Type.Optional(
      Type.String({ minLength: 1, maxLength: 300, description: 'Mail subject (default: the flow title)' }),
    ),
  },
  { additionalProperties: false },
);

const flowFields = {
  title: Title,
  description: Type.Optional(Description),
  active: Type.Optional(Type.Boolean()),
  source: Source,
  steps: Type.Optional(
    Type.Array(Step, { maxItems: 20, description: 'Filters and transformers, run in this order' }),
  ),
  targets: Type.Optional(
    Type.Array(Target, { maxItems: 10, description: 'Outgoing connectors the result goes to' }),
  ),
};

export const IntegrationFlowCreate = Type.Object(
  { ...flowFields, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

export const IntegrationFlowUpdate = Type.Object(
  { ...flowFields, title: Type.Optional(Title), source: Type.Optional(Source) },
  { additionalProperties: false },
);

export const IntegrationFlowReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  title: Type.String(),
  description: Type.String(),
  active: Type.Boolean(),
  source: Type.Record(Type.String(), Type.Unknown()),
  steps: Type.Array(Type.Object({ type: Type.String(), id: Uuid })),
  targets: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  permissionScopeIds: Type.Union([Type.Array(Uuid), Type.Null()], {
    description:
      'The permission scopes of whoever saved the flow last (null: unrestricted): it takes only packets and alarm entries of these scopes.',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const FlowRunReply = Type.Object({
  id: Uuid,
  trigger: Type.String(),
  outcome: Type.String({ description: 'sent, filtered or failed' }),
  input: Type.Unknown(),
  output: Type.Unknown(),
  error: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  deliveries: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  durationMs: Type.Integer(),
  startedAt: Timestamp,
});

export const FlowRunsReply = Type.Object({ data: Type.Array(FlowRunReply) });

export const AccountListQuery = Type.Object(
  { ...ListQuery, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

const Code = (kind: 'filter' | 'transformer') =>
  Type.String({
    minLength: 1,
    maxLength: MAX_FLOW_SCRIPT_LENGTH,
    default: SCRIPT_TEMPLATES[kind],
    description:
      kind === 'filter'
        ? 'JavaScript defining function filter(input, meta) that returns true (pass) or false (stop)'
        : 'JavaScript defining function transform(input, meta) that returns the value passed on',
  });

const InputType = Type.Union(
  FILTER_INPUT_TYPES.map((t) => Type.Literal(t)),
  {
    default: 'Generic',
    description: 'What the filter expects; other input is reported as DS_FILTER_INVALID_INPUT',
  },
);

export const FilterCreate = Type.Object(
  {
    title: Title,
    description: Type.Optional(Description),
    inputType: Type.Optional(InputType),
    code: Code('filter'),
    accountId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);
export const FilterUpdate = Type.Object(
  {
    title: Type.Optional(Title),
    description: Type.Optional(Description),
    inputType: Type.Optional(InputType),
    code: Type.Optional(Code('filter')),
  },
  { additionalProperties: false },
);
export const TransformerCreate = Type.Object(
  {
    title: Title,
    description: Type.Optional(Description),
    code: Code('transformer'),
    accountId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);
export const TransformerUpdate = Type.Object(
  {
    title: Type.Optional(Title),
    description: Type.Optional(Description),
    code: Type.Optional(Code('transformer')),
  },
  { additionalProperties: false },
);

const scriptFields = {
  id: Uuid,
  accountId: Uuid,
  title: Type.String(),
  description: Type.String(),
  code: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};
export const FilterReply = Type.Object({ ...scriptFields, inputType: Type.String() });
export const TransformerReply = Type.Object(scriptFields);

export const ScriptTestBody = Type.Object(
  { input: Type.Unknown({ description: 'Sample input, as the flow would hand it over' }) },
  { additionalProperties: false },
);
export const ScriptTestReply = Type.Object({ output: Type.Unknown(), durationMs: Type.Integer() });
