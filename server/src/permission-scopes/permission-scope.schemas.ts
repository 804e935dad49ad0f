import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

export const PermissionScopeCreate = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    accountId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const PermissionScopeUpdate = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
  },
  { additionalProperties: false },
);

export const PermissionScopeReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  title: Type.String(),
  description: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const PermissionScopeListQuery = Type.Object(
  { ...ListQuery, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);
