import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

export const AuditEventListQuery = Type.Object(
  {
    ...ListQuery,
    accountId: Type.Optional(
      Type.String({
        format: 'uuid',
        description: 'Only this account (one you reach); without it: your account and every account below',
      }),
    ),
    action: Type.Optional(
      Type.String({ maxLength: 100, description: 'Exact action, e.g. account.oauthConfig.change' }),
    ),
  },
  { additionalProperties: false },
);

export const AuditEventReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  occurredAt: Timestamp,
  actor: Type.Object({
    kind: Type.Union([Type.Literal('user'), Type.Literal('apiKey'), Type.Literal('system')]),
    id: Type.Union([Uuid, Type.Null()], {
      description: 'The user or API key; null for the system and for actors of accounts above yours',
    }),
  }),
  action: Type.String(),
  target: Type.Union([Type.Object({ type: Type.String(), id: Type.String() }), Type.Null()]),
  details: Type.Record(Type.String(), Type.Unknown()),
});
