import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';
import { CONNECTOR_TYPES } from './kinds/index.js';

const ConnectorType = Type.Union(
  CONNECTOR_TYPES.map((t) => Type.Literal(t)),
  { description: 'Connector kind; see `capabilities` in replies for what a kind does in this version' },
);

const Config = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'Settings of the kind. mqtt-in: url, topics, qos, protocolVersion, clientId, username, password, ' +
    'serverCa, clientCert, clientKey, rejectUnauthorized, deviceIdSource, deviceIdTopicSegment, deviceIdField. ' +
    'webhook-in: deviceIdField. tts-uplink: deviceIdFrom (dev_eui | device_id). ' +
    'mqtt-broker: maxConnections (clients connected at once). Secrets come back masked.',
});

export const ConnectorCreate = Type.Object(
  {
    type: ConnectorType,
    title: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    active: Type.Optional(Type.Boolean()),
    config: Type.Optional(Config),
    accountId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const ConnectorUpdate = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    config: Type.Optional(Config),
  },
  { additionalProperties: false },
);

export const ConnectorListQuery = Type.Object(
  { ...ListQuery, accountId: Type.Optional(Uuid), type: Type.Optional(Type.String({ maxLength: 40 })) },
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

export const WebhookBody = Type.Union(
  [Type.Record(Type.String(), Type.Unknown()), Type.Array(Type.Unknown())],
  { description: '`{"device_id": "…", …values}` or an array of at most 50 such objects' },
);

export const WebhookReply = Type.Object({ accepted: Type.Integer() });
