import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

const Reference = Type.Union([Type.Object({ type: Type.String(), id: Uuid }), Type.Null()]);
const Source = Type.Union([Type.Object({ kind: Type.String(), id: Uuid }), Type.Null()]);

export const AlarmLogReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  category: Type.String(),
  message: Type.String(),
  reference: Reference,
  source: Source,
  status: Type.Union([Type.Literal('open'), Type.Literal('acknowledged'), Type.Literal('closed')]),
  acknowledgedAt: Type.Union([Timestamp, Type.Null()]),
  acknowledgedBy: Type.Union([Uuid, Type.Null()]),
  closedAt: Type.Union([Timestamp, Type.Null()]),
  closedBy: Type.Union([Uuid, Type.Null()]),
  details: Type.Record(Type.String(), Type.Unknown()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const AlarmLogListQuery = Type.Object(
  {
    ...ListQuery,
    accountId: Type.Optional(Uuid),
    status: Type.Optional(
      Type.String({
        pattern: '^(open|acknowledged|closed)(,(open|acknowledged|closed))*$',
        description: 'One status or several, comma-separated: `open,acknowledged`.',
      }),
    ),
    category: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    referenceType: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
    referenceId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);
