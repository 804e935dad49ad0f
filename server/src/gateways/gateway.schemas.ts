import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

const Location = Type.Object(
  {
    latitude: Type.Number({ minimum: -90, maximum: 90 }),
    longitude: Type.Number({ minimum: -180, maximum: 180 }),
    altitude: Type.Optional(Type.Union([Type.Number({ minimum: -1000, maximum: 100_000 }), Type.Null()])),
  },
  { additionalProperties: false },
);

const fields = {
  eui: Type.String({
    pattern: '^[0-9A-Fa-f]{2}([-:]?[0-9A-Fa-f]{2}){7}$',
    description: 'Gateway EUI, 16 hex digits (separators - or : allowed); stored lower-case.',
  }),
  networkId: Type.Optional(
    Type.Union([Type.String({ maxLength: 100 }), Type.Null()], {
      description: 'The network server’s own gateway id where it differs from the EUI (TTS `gateway_id`).',
    }),
  ),
  title: Type.Optional(Type.String({ maxLength: 200, description: 'Default: the EUI.' })),
  description: Type.Optional(Type.String({ maxLength: 10_000 })),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 })),
  location: Type.Optional(Type.Union([Location, Type.Null()])),
  connectorId: Type.Optional(
    Type.Union([Uuid, Type.Null()], { description: 'The network-server connector (same account).' }),
  ),
  permissionScopeId: Type.Optional(Type.Union([Uuid, Type.Null()])),
  offlineAfterSeconds: Type.Optional(
    Type.Union([Type.Integer({ minimum: 30, maximum: 7 * 24 * 3600 }), Type.Null()], {
      description: 'Offline after this much silence; null: STELLWERK_GATEWAY_OFFLINE_AFTER_SECONDS.',
    }),
  ),
};

export const GatewayCreate = Type.Object(
  { ...fields, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

export const GatewayUpdate = Type.Object(
  { ...fields, eui: Type.Optional(fields.eui) },
  { additionalProperties: false },
);

export const GatewayReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  eui: Type.String(),
  networkId: Type.Union([Type.String(), Type.Null()]),
  title: Type.String(),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  location: Type.Union([
    Type.Object({
      latitude: Type.Number(),
      longitude: Type.Number(),
      altitude: Type.Union([Type.Number(), Type.Null()]),
    }),
    Type.Null(),
  ]),
  connectorId: Type.Union([Uuid, Type.Null()]),
  permissionScopeId: Type.Union([Uuid, Type.Null()]),
  offlineAfterSeconds: Type.Union([Type.Integer(), Type.Null()]),
  status: Type.Union([Type.Literal('online'), Type.Literal('offline')]),
  statusChangedAt: Type.Union([Timestamp, Type.Null()]),
  lastSeenAt: Type.Union([Timestamp, Type.Null()]),
  uplinks24h: Type.Integer({ description: 'Uplinks heard through the gateway in the last 24 hours.' }),
  meanRssi24h: Type.Union([Type.Number(), Type.Null()], { description: 'dBm, last 24 hours.' }),
  meanSnr24h: Type.Union([Type.Number(), Type.Null()], { description: 'dB, last 24 hours.' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const GatewayListQuery = Type.Object(
  {
    ...ListQuery,
    accountId: Type.Optional(Uuid),
    connectorId: Type.Optional(Uuid),
    status: Type.Optional(Type.Union([Type.Literal('online'), Type.Literal('offline')])),
  },
  { additionalProperties: false },
);

export const HeardDeviceReply = Type.Object({
  deviceId: Uuid,
  device_id: Type.String(),
  title: Type.String(),
  lastHeardAt: Timestamp,
  rssi: Type.Union([Type.Number(), Type.Null()]),
  snr: Type.Union([Type.Number(), Type.Null()]),
  uplinks: Type.Integer(),
});

export const HeardDeviceQuery = Type.Object(
  { page: ListQuery.page, pageSize: ListQuery.pageSize },
  { additionalProperties: false },
);

export const GatewayImportBody = Type.Object({ connectorId: Uuid }, { additionalProperties: false });

export const GatewayImportReply = Type.Object({
  connectorId: Uuid,
  created: Type.Integer(),
  updated: Type.Integer(),
  skipped: Type.Array(Type.Object({ id: Type.String(), reason: Type.String() })),
});

export const UnknownGatewaysQuery = Type.Object(
  { accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

export const UnknownGatewayReply = Type.Object({
  eui: Type.Union([Type.String(), Type.Null()]),
  networkId: Type.Union([Type.String(), Type.Null()]),
  lastHeardAt: Timestamp,
  uplinks: Type.Integer(),
});
