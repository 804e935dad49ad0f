import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

const Locale = Type.String({
  minLength: 2,
  maxLength: 16,
  pattern: '^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$',
});
const Ids = (description: string) => Type.Array(Uuid, { maxItems: 100, description });

export const UserCreate = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 320 }),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    password: Type.Optional(
      Type.String({ minLength: 12, maxLength: 1024, description: 'Omit to invite the user to choose one' }),
    ),
    locale: Type.Optional(Locale),
    active: Type.Optional(Type.Boolean()),
    roleIds: Type.Optional(Ids('Built-in roles or roles of the account or its parents')),
    permissionScopeIds: Type.Optional(
      Ids('Restrict the user to these access areas; empty: the whole account'),
    ),
    accountId: Type.Optional(Uuid),
    suppressInvitation: Type.Optional(
      Type.Boolean({ description: 'Do not mail an invitation link to a user created without password' }),
    ),
  },
  { additionalProperties: false },
);

export const UserUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200 })),
    locale: Type.Optional(Locale),
    active: Type.Optional(Type.Boolean()),
    permissionScopeIds: Type.Optional(Ids('Replaces the user’s access areas; empty: the whole account')),
  },
  { additionalProperties: false },
);

const UserFields = {
  id: Uuid,
  accountId: Uuid,
  email: Type.String(),
  name: Type.String(),
  locale: Type.String(),
  active: Type.Boolean(),
  roleIds: Type.Array(Uuid),
  roles: Type.Array(Type.Object({ id: Uuid, name: Type.String(), builtIn: Type.Boolean() })),
  permissionScopeIds: Type.Array(Uuid),
  twoFactorEnabled: Type.Boolean(),
  passwordSet: Type.Boolean({ description: 'false: invited or federated user without a password' }),
  invitationPending: Type.Boolean(),
  lastLoginAt: Type.Union([Timestamp, Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

export const UserReply = Type.Object(UserFields);

export const Invitation = Type.Object({
  expiresAt: Timestamp,
  delivery: Type.Union([Type.Literal('smtp'), Type.Literal('log'), Type.Literal('failed')], {
    description:
      'smtp: mailed; log: no SMTP server configured, the link is in the server log; failed: mailing failed',
  }),
  link: Type.Optional(
    Type.String({
      description:
        'The one-time link, only when it was not mailed (log, failed): for the administrator to hand over. It works once and until expiresAt.',
    }),
  ),
});

export const UserCreatedReply = Type.Object({
  ...UserFields,
  invitation: Type.Union([Invitation, Type.Null()]),
});

export const MeReply = Type.Object({ ...UserFields, permissions: Type.Array(Type.String()) });

export const UserListQuery = Type.Object(
  { ...ListQuery, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

export const UserRoleParams = Type.Object({ id: Uuid, roleId: Uuid });

export const InvitationAccept = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200 }),
    password: Type.String({ minLength: 12, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

export const InvitationAccepted = Type.Object({ id: Uuid, email: Type.String() });

export const InvitationLookup = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

export const InvitationFound = Type.Object({
  email: Type.String({ description: 'The address the invitation was sent to' }),
});
