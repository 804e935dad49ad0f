import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

const Label = Type.String({ minLength: 1, maxLength: 100 });
const fields = {
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 5000 })),
  deviceDriverId: Type.Optional(Type.Union([Uuid, Type.Null()])),
  connectorType: Type.Optional(Type.Union([Type.String({ maxLength: 40 }), Type.Null()])),
  tags: Type.Optional(Type.Array(Label, { maxItems: 200 })),
  groups: Type.Optional(
    Type.Array(Label, { maxItems: 200, description: 'Managed groups: devices cannot drop them.' }),
  ),
  keyValueData: Type.Optional(
    Type.Record(
      Type.String({ minLength: 1, maxLength: 100 }),
      Type.Union([Type.String({ maxLength: 2000 }), Type.Number(), Type.Boolean(), Type.Null()]),
    ),
  ),
  healthConfig: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
};

export const DeviceTemplateCreate = Type.Object(
  { ...fields, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

export const DeviceTemplateUpdate = Type.Object(
  { ...fields, title: Type.Optional(fields.title) },
  { additionalProperties: false },
);

export const DeviceTemplateReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  title: Type.String(),
  description: Type.String(),
  deviceDriverId: Type.Union([Uuid, Type.Null()]),
  connectorType: Type.Union([Type.String(), Type.Null()]),
  tags: Type.Array(Type.String()),
  groups: Type.Array(Type.String()),
  keyValueData: Type.Record(Type.String(), Type.Unknown()),
  healthConfig: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const DeviceTemplateCopyReply = Type.Object({
  ...DeviceTemplateReply.properties,
  driverDropped: Type.Boolean({
    description: 'The driver is not available in the target account; the copy has none.',
  }),
});

export const DeviceTemplateListQuery = Type.Object(
  { ...ListQuery, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

export const CopyBody = Type.Object(
  { targetAccountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

export const LinkBody = Type.Object(
  { deviceIds: Type.Array(Uuid, { maxItems: 1000 }) },
  { additionalProperties: false },
);
