import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

const fields = {
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 5000 })),
  layout: Type.Optional(
    Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), {
      description: 'Widget grid as the console saves it.',
    }),
  ),
};

export const DashboardCreate = Type.Object(
  { ...fields, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

/** Partial: omitted fields keep their value. */
export const DashboardUpdate = Type.Object(
  { ...fields, title: Type.Optional(fields.title) },
  { additionalProperties: false },
);

export const DashboardReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  title: Type.String(),
  description: Type.String(),
  layout: Type.Record(Type.String(), Type.Unknown()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const DashboardListQuery = Type.Object(
  { ...ListQuery, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);
