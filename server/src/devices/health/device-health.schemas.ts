import { Type } from 'typebox';
import { HealthConfigSchema, HealthRuleSchema } from '../../drivers/device-driver.schemas.js';
import { Timestamp, Uuid } from '../../platform/http/schemas.js';

const HealthSchedule = Type.Object(
  {
    cron: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    intervalSeconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 366 * 24 * 3600 })),
  },
  {
    additionalProperties: false,
    description: 'One of cron (account time zone) or intervalSeconds (counted from saving).',
  },
);

export const ManualHealthBody = Type.Object(
  {
    rules: Type.Optional(Type.Array(HealthRuleSchema, { maxItems: 100 })),
    silentAfterSeconds: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: 366 * 24 * 3600 }), Type.Null()]),
    ),
    alarmOnChange: Type.Optional(Type.Boolean()),
    schedule: Type.Optional(HealthSchedule),
  },
  {
    additionalProperties: false,
    description:
      "The device's own health rules (manual); omitted parts are taken from the rules in force. " +
      'Without a schedule the device keeps its daily time.',
  },
);

export const DeviceHealthReply = Type.Object({
  deviceId: Uuid,
  healthState: Type.String(),
  healthReason: Type.Union([Type.String(), Type.Null()]),
  healthCheckedAt: Type.Union([Timestamp, Type.Null()]),
  healthNextCheckAt: Type.Union([Timestamp, Type.Null()]),
  mode: Type.Union([Type.Literal('default'), Type.Literal('manual')], {
    description: "default: the driver's rules in the daily slot; manual: own rules on their own schedule",
  }),
  config: Type.Union([HealthConfigSchema, Type.Null()]),
  schedule: Type.Union([
    Type.Object({
      cron: Type.Optional(Type.String()),
      intervalSeconds: Type.Optional(Type.Number()),
      at: Type.Optional(Type.String()),
    }),
    Type.Null(),
  ]),
  dailySlot: Type.String({ description: 'Time of day (UTC, HH:MM:SS) of the default evaluation' }),
});
