import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

const Permissions = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  maxItems: 200,
  description: 'Names from GET /xapi/v1/permissions (case-insensitive; stored in canonical spelling).',
});

export const RoleCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    permissions: Permissions,
    accountId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const RoleUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    permissions: Type.Optional(Permissions),
  },
  { additionalProperties: false },
);

export const RoleReply = Type.Object({
  id: Uuid,
  accountId: Type.Union([Uuid, Type.Null()], {
    description: 'null for built-in roles and for roles of an account above yours',
  }),
  name: Type.String(),
  description: Type.String(),
  permissions: Type.Array(Type.String()),
  builtIn: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const RoleListQuery = Type.Object(
  { ...ListQuery, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

export const PermissionCatalogueReply = Type.Object({ data: Type.Array(Type.String()) });
