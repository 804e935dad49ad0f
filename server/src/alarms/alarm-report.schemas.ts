import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

const Target = Type.Union([Type.Literal('device'), Type.Literal('twin')]);
const FilterValue = Type.Union([
  Type.String({ maxLength: 200 }),
  Type.Array(Type.String({ maxLength: 200 }), { maxItems: 50 }),
]);

export const SmartGroupCreate = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    target: Type.Optional(Target),
    filter: Type.Optional(
      Type.Record(Type.String({ maxLength: 120 }), FilterValue, {
        description:
          'List filter parameters: `filter[title]`, `filter[tag]`, `filter[kv.<key>]`, each optionally with `[not]`.',
        maxProperties: 50,
      }),
    ),
    accountId: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const SmartGroupUpdate = Type.Object(
  {
    title: Type.Optional(SmartGroupCreate.properties.title),
    target: Type.Optional(Target),
    filter: SmartGroupCreate.properties.filter,
  },
  { additionalProperties: false },
);

export const SmartGroupReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  title: Type.String(),
  target: Target,
  filter: Type.Record(Type.String(), Type.Unknown()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Schedule = Type.Union([
  Type.Object(
    {
      cron: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      intervalSeconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 366 * 24 * 3600 })),
    },
    { additionalProperties: false, description: 'One of cron (account time zone) or intervalSeconds.' },
  ),
  Type.Null(),
]);

const reportFields = {
  title: Type.String({ minLength: 1, maxLength: 200 }),
  schedule: Type.Optional(Schedule),
  alarmHealthStates: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 40 }), { maxItems: 50 }),
  ),
  mailConnectorId: Type.Optional(
    Type.Union([Uuid, Type.Null()], { description: 'An smtp-mail connector of the same account.' }),
  ),
  mailTo: Type.Optional(Type.Array(Type.String({ format: 'email', maxLength: 320 }), { maxItems: 50 })),
};

export const AlarmReportCreate = Type.Object(reportFields, { additionalProperties: false });

export const AlarmReportUpdate = Type.Object(
  { ...reportFields, title: Type.Optional(reportFields.title), smartGroupId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

export const AlarmReportReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  smartGroupId: Uuid,
  title: Type.String(),
  schedule: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  alarmHealthStates: Type.Array(Type.String()),
  mailConnectorId: Type.Union([Uuid, Type.Null()]),
  mailTo: Type.Array(Type.String()),
  permissionScopeIds: Type.Union([Type.Array(Uuid), Type.Null()], {
    description:
      'The permission scopes of whoever saved the report last (null: unrestricted): runs look only at members of these scopes.',
  }),
  nextRunAt: Type.Union([Timestamp, Type.Null()]),
  lastRunAt: Type.Union([Timestamp, Type.Null()]),
  lastResult: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const AccountListQuery = Type.Object(
  { ...ListQuery, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);
