import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';
import { CONNECTOR_STATUSES, MONITOR_TYPES } from './monitoring-conditions.js';

const Seconds = Type.Number({ exclusiveMinimum: 0, maximum: 366 * 24 * 3600 });
export const MonitorTypeSchema = Type.Union(MONITOR_TYPES.map((t) => Type.Literal(t)));

const Params = Type.Object(
  {
    windowSeconds: Type.Optional(Seconds),
    threshold: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
    comparison: Type.Optional(Type.Union([Type.Literal('above'), Type.Literal('below')])),
    status: Type.Optional(Type.Union(CONNECTOR_STATUSES.map((s) => Type.Literal(s)))),
    durationSeconds: Type.Optional(Seconds),
  },
  {
    additionalProperties: false,
    description:
      'packet-threshold, failed-packet-threshold: windowSeconds, threshold, comparison (above: at least; below: fewer than); status-duration: status, durationSeconds; status-count: status, windowSeconds, threshold; status-change: windowSeconds, threshold; no-data: windowSeconds.',
  },
);

const fields = {
  title: Type.String({ minLength: 1, maxLength: 200 }),
  type: MonitorTypeSchema,
  params: Params,
  active: Type.Optional(Type.Boolean()),
  mailConnectorId: Type.Optional(
    Type.Union([Uuid, Type.Null()], { description: 'An smtp-mail connector of the same account.' }),
  ),
  mailTo: Type.Optional(Type.Array(Type.String({ format: 'email', maxLength: 320 }), { maxItems: 50 })),
};

export const MonitoringRuleCreate = Type.Object(fields, { additionalProperties: false });

export const MonitoringRuleUpdate = Type.Object(
  {
    title: Type.Optional(fields.title),
    type: Type.Optional(fields.type),
    params: Type.Optional(fields.params),
    active: fields.active,
    mailConnectorId: fields.mailConnectorId,
    mailTo: fields.mailTo,
  },
  { additionalProperties: false },
);

export const MonitoringRuleReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  connectorId: Uuid,
  title: Type.String(),
  type: Type.String({ description: MONITOR_TYPES.join(', ') }),
  params: Type.Record(Type.String(), Type.Unknown()),
  active: Type.Boolean(),
  mailConnectorId: Type.Union([Uuid, Type.Null()]),
  mailTo: Type.Array(Type.String()),
  firing: Type.Boolean({
    description: 'The condition held at the last evaluation (it fires again once it stopped).',
  }),
  lastFiredAt: Type.Union([Timestamp, Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const MonitoringRuleListQuery = Type.Object(
  { ...ListQuery, accountId: Type.Optional(Uuid), connectorId: Type.Optional(Uuid) },
  { additionalProperties: false },
);
