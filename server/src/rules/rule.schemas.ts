import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

const Key = Type.String({ minLength: 1, maxLength: 200 });

const Condition = Type.Object(
  {
    stateKey: Key,
    operator: Type.String({
      minLength: 1,
      maxLength: 20,
      description:
        '<, <=, >, >=, ==, !=, between, isTrue, isFalse, contains, matches, hasKey, exists, missing',
    }),
    value: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

const EventTrigger = Type.Object(
  {
    type: Type.Literal('event'),
    conditions: Type.Array(Condition, { minItems: 1, maxItems: 50 }),
    match: Type.Optional(Type.Union([Type.Literal('all'), Type.Literal('any')])),
    onChangeOnly: Type.Optional(
      Type.Boolean({ description: 'Default true: fires when the conditions start to hold.' }),
    ),
  },
  { additionalProperties: false },
);

const TimeTrigger = Type.Object(
  {
    type: Type.Literal('time'),
    schedule: Type.Object(
      {
        at: Type.Optional(Type.String({ format: 'date-time', description: 'One time point.' })),
        cron: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 200,
            description: 'Cron expression in the account’s time zone.',
          }),
        ),
        intervalSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 366 * 24 * 3600 })),
      },
      { additionalProperties: false, description: 'Exactly one of at, cron, intervalSeconds.' },
    ),
  },
  { additionalProperties: false },
);

const LocationTrigger = Type.Object(
  {
    type: Type.Literal('location'),
    area: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'GeoJSON Polygon or MultiPolygon (or a Feature with one), or a Feature with a Point and properties.radius in metres (a circle).',
      },
    ),
    on: Type.Union([Type.Literal('enter'), Type.Literal('leave'), Type.Literal('both')]),
    locationKey: Type.Optional(Key),
    latitudeKey: Type.Optional(Key),
    longitudeKey: Type.Optional(Key),
  },
  { additionalProperties: false },
);

export const RuleTriggerSchema = Type.Union([EventTrigger, TimeTrigger, LocationTrigger]);

const Command = Type.Object(
  {
    type: Type.String({
      minLength: 1,
      maxLength: 40,
      description: 'webhook, email, mqtt-publish, set-state, aggregate-trigger, alarm, downlink',
    }),
  },
  { additionalProperties: true },
);

const fields = {
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 5000 })),
  active: Type.Optional(Type.Boolean()),
  twinId: Type.Optional(Type.Union([Uuid, Type.Null()])),
  trigger: RuleTriggerSchema,
  commands: Type.Array(Command, { maxItems: 20 }),
};

export const RuleCreate = Type.Object(
  { ...fields, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

export const RuleUpdate = Type.Object(
  {
    ...fields,
    title: Type.Optional(fields.title),
    trigger: Type.Optional(fields.trigger),
    commands: Type.Optional(fields.commands),
  },
  { additionalProperties: false },
);

export const RuleReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  twinId: Type.Union([Uuid, Type.Null()]),
  title: Type.String(),
  description: Type.String(),
  active: Type.Boolean(),
  trigger: Type.Record(Type.String(), Type.Unknown()),
  commands: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  permissionScopeIds: Type.Union([Type.Array(Uuid), Type.Null()], {
    description:
      'The permission scopes of whoever saved the rule last (null: unrestricted): it runs only over twins of these scopes.',
  }),
  nextRunAt: Type.Union([Timestamp, Type.Null()]),
  lastFiredAt: Type.Union([Timestamp, Type.Null()]),
  lastRun: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const RuleListQuery = Type.Object(
  {
    ...ListQuery,
    accountId: Type.Optional(Uuid),
    twinId: Type.Optional(Uuid),
    triggerType: Type.Optional(
      Type.Union([Type.Literal('event'), Type.Literal('time'), Type.Literal('location')]),
    ),
  },
  { additionalProperties: false },
);
