import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

const Permissions = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  maxItems: 200,
  description: 'Names from GET /xapi/v1/permissions; only permissions the caller holds.',
});

export const ApiKeyCreate = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    permissions: Permissions,
    active: Type.Optional(Type.Boolean()),
    accountId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const ApiKeyUpdate = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    permissions: Type.Optional(Permissions),
    active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const ApiKeyFields = {
  id: Uuid,
  accountId: Uuid,
  title: Type.String(),
  prefix: Type.String({ description: 'First characters of the key, to tell keys apart' }),
  permissions: Type.Array(Type.String()),
  active: Type.Boolean(),
  createdByUserId: Type.Union([Uuid, Type.Null()]),
  lastUsedAt: Type.Union([Timestamp, Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

export const ApiKeyReply = Type.Object(ApiKeyFields);

export const ApiKeyCreatedReply = Type.Object({
  ...ApiKeyFields,
  key: Type.String({ description: 'The key itself; shown this once, only its hash is stored' }),
});

export const ApiKeyListQuery = Type.Object(
  { ...ListQuery, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);
