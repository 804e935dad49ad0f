import type { FastifySchemaCompiler } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import { compileValidator } from '../platform/http/validation.js';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';
import { CONNECTOR_KIND_DESCRIPTORS, CONNECTOR_TYPES } from './kinds/index.js';

const ConnectorType = Type.Union(
  CONNECTOR_TYPES.map((t) => Type.Literal(t)),
  { description: 'Connector kind; see `capabilities` in replies for what a kind does in this version' },
);

const Config = Type.Record(Type.String(), Type.Unknown(), {
  description: "Settings of the kind (its schema in the OpenAPI's oneOf). Secrets come back masked.",
});

const Title = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 2000 });

/** What Fastify checks of a create body; the settings are checked against the kind by the service. */
const ConnectorCreateEnvelope = Type.Object(
  {
    type: ConnectorType,
    title: Title,
    description: Type.Optional(Description),
    active: Type.Optional(Type.Boolean()),
    config: Type.Optional(Config),
    accountId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

const ConnectorUpdateEnvelope = Type.Object(
  {
    title: Type.Optional(Title),
    description: Type.Optional(Description),
    config: Type.Optional(Config),
  },
  { additionalProperties: false },
);

const kindSettings = (kind: (typeof CONNECTOR_KIND_DESCRIPTORS)[number]): TSchema => ({
  ...kind.settings,
  title: `${kind.type} settings`,
  description: kind.summary,
});

/**
 * The create body as documented: one object per kind, its `config` the kind's settings schema
 * (docs/adr/0074-connector-kind-descriptors.md). The static type stays the envelope's.
 */
export const ConnectorCreate = Type.Unsafe<Static<typeof ConnectorCreateEnvelope>>({
  oneOf: CONNECTOR_KIND_DESCRIPTORS.map((kind) =>
    Type.Object(
      {
        type: Type.Literal(kind.type),
        title: Title,
        description: Type.Optional(Description),
        active: Type.Optional(Type.Boolean()),
        config: Type.Optional(kindSettings(kind)),
        accountId: Type.Optional(Uuid),
      },
      { additionalProperties: false, title: kind.type },
    ),
  ),
  discriminator: { propertyName: 'type' },
});

export const ConnectorUpdate = Type.Unsafe<Static<typeof ConnectorUpdateEnvelope>>(
  Type.Object(
    {
      title: Type.Optional(Title),
      description: Type.Optional(Description),
      config: Type.Optional(
        Type.Unsafe({
          oneOf: CONNECTOR_KIND_DESCRIPTORS.map(kindSettings),
          description: "The connector kind's settings; masked secrets keep their value",
        }),
      ),
    },
    { additionalProperties: false },
  ),
);

/**
 * Validates connector bodies by their envelope only. Ajv's `removeAdditional` would strip, inside
 * the documented `oneOf` branches, properties of the branch that finally matches; the service
 * checks `config` against the kind and names each bad field.
 */
export const connectorBodyValidator: FastifySchemaCompiler<unknown> = (route) => {
  if (route.httpPart !== 'body') return compileValidator(route);
  const envelope = route.method === 'POST' ? ConnectorCreateEnvelope : ConnectorUpdateEnvelope;
  return compileValidator({ ...route, schema: envelope });
};

export const ConnectorListQuery = Type.Object(
  {
    ...ListQuery,
    accountId: Type.Optional(Uuid),
    type: Type.Optional(Type.String({ maxLength: 40 })),
    active: Type.Optional(
      Type.Boolean({ description: 'Only active (`true`) or deactivated (`false`) connectors' }),
    ),
  },
  { additionalProperties: false },
);

const ConnectorFields = {
  id: Uuid,
  accountId: Uuid,
  title: Type.String(),
  description: Type.String(),
  type: Type.String(),
  direction: Type.Union([Type.Literal('incoming'), Type.Literal('outgoing')]),
  capabilities: Type.Array(Type.String(), {
    description: 'broker, webhook, subscribe, receives, sends; empty: stored only, does nothing yet',
  }),
  active: Type.Boolean(),
  apiEndpoint: Type.Union([Type.String(), Type.Null()], {
    description: 'Incoming webhook URL, embedded-broker URL or the external broker URL',
  }),
  brokerUsername: Type.Union([Type.String(), Type.Null()]),
  config: Type.Record(Type.String(), Type.Unknown()),
  packetsIn: Type.Integer(),
  packetsFailed: Type.Integer(),
  lastPacketAt: Type.Union([Timestamp, Type.Null()]),
  creationDate: Timestamp,
  updatedAt: Timestamp,
};

export const ConnectorReply = Type.Object(ConnectorFields);

const Credentials = Type.Object(
  {
    username: Type.Optional(Type.String()),
    password: Type.Optional(Type.String()),
    apiEndpoint: Type.Optional(Type.String()),
  },
  { description: 'Shown this once: broker login (mqtt-broker) or webhook URL (webhook kinds)' },
);

export const ConnectorCreatedReply = Type.Object({
  ...ConnectorFields,
  credentials: Type.Union([Credentials, Type.Null()]),
});

export const CredentialsReply = Type.Object({ credentials: Credentials });

export const ConnectorLogReply = Type.Object({
  id: Uuid,
  level: Type.String(),
  message: Type.String(),
  details: Type.Record(Type.String(), Type.Unknown()),
  createdAt: Timestamp,
});

export const LogsQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100 })) },
  { additionalProperties: false },
);

export const WebhookParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });

export const WebhookPathParams = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200 }),
  '*': Type.String({ maxLength: 200, description: 'Message path, e.g. uplink or downlink/ack' }),
});

export const WebhookBody = Type.Union(
  [Type.Record(Type.String(), Type.Unknown()), Type.Array(Type.Unknown())],
  { description: '`{"device_id": "…", …values}` or an array of at most 50 such objects' },
);

export const WebhookReply = Type.Object({ accepted: Type.Integer() });

export const ConnectorKindReply = Type.Object({
  type: Type.String(),
  direction: Type.Union([Type.Literal('incoming'), Type.Literal('outgoing')]),
  summary: Type.String(),
  capabilities: Type.Array(Type.String(), { description: 'Empty: stored only, does nothing yet' }),
  settings: Type.Record(Type.String(), Type.Unknown(), {
    description: 'JSON Schema of `config`; secrets are `writeOnly`',
  }),
  freeForm: Type.Boolean({ description: 'Settings are free-form (kinds that do nothing yet)' }),
  monitoring: Type.Optional(
    Type.Union([Type.Literal('connection'), Type.Literal('broker-clients')], {
      description: 'How connector monitoring tells connected from disconnected',
    }),
  ),
  delivers: Type.Optional(
    Type.Union([Type.Literal('http'), Type.Literal('mqtt'), Type.Literal('kafka'), Type.Literal('mail')], {
      description: 'Outgoing kinds: what one message is; rule commands pick connectors by it',
    }),
  ),
  devices: Type.Object({
    required: Type.Array(Type.String(), { description: 'Device fields a device on such a connector needs' }),
    lowerCaseEui: Type.Boolean(),
    endDeviceId: Type.Boolean(),
  }),
});

/** A kind as clients see it: the descriptor without its runtime (docs/adr/0074-connector-kind-descriptors.md). */
export const connectorKindDto = (kind: (typeof CONNECTOR_KIND_DESCRIPTORS)[number]) => ({
  type: kind.type,
  direction: kind.direction,
  summary: kind.summary,
  capabilities: [...kind.capabilities],
  settings: JSON.parse(JSON.stringify(kind.settings)) as Record<string, unknown>,
  freeForm: kind.freeForm ?? false,
  ...(kind.monitoring ? { monitoring: kind.monitoring } : {}),
  ...(kind.delivers ? { delivers: kind.delivers } : {}),
  devices: { ...kind.devices, required: [...kind.devices.required] },
});
