import { Type } from 'typebox';
import { Timestamp, Uuid } from '../platform/http/schemas.js';

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    otp: Type.Optional(Type.String({ pattern: '^[0-9]{6}$', description: 'Current 6-digit TOTP code' })),
    recoveryCode: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);

export const UserSummary = Type.Object({
  id: Uuid,
  accountId: Uuid,
  email: Type.String(),
  name: Type.String(),
  locale: Type.String(),
  twoFactorEnabled: Type.Boolean(),
  permissions: Type.Array(Type.String()),
});

export const LoginReply = Type.Object({ token: Type.String(), expiresAt: Timestamp, user: UserSummary });
