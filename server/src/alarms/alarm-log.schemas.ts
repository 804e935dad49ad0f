import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';
import { MAX_BULK_ALARMS } from './alarm-bulk.service.js';
import { ALARM_SEVERITIES } from './alarm-log.entity.js';

const Reference = Type.Union([Type.Object({ type: Type.String(), id: Uuid }), Type.Null()]);
const Source = Type.Union([Type.Object({ kind: Type.String(), id: Uuid }), Type.Null()]);

export const AlarmSeverity = Type.Union(
  [
    Type.Literal('info'),
    Type.Literal('warning'),
    Type.Literal('minor'),
    Type.Literal('major'),
    Type.Literal('critical'),
  ],
  { description: 'From the least to the most severe: info, warning, minor, major, critical.' },
);
const SEVERITY_LIST = `^(${ALARM_SEVERITIES.join('|')})(,(${ALARM_SEVERITIES.join('|')}))*$`;
const STATUS_LIST = '^(open|acknowledged|closed)(,(open|acknowledged|closed))*$';

export const AlarmLogReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  category: Type.String(),
  message: Type.String(),
  reference: Reference,
  source: Source,
  status: Type.Union([Type.Literal('open'), Type.Literal('acknowledged'), Type.Literal('closed')]),
  severity: AlarmSeverity,
  occurrenceCount: Type.Integer({
    minimum: 1,
    description: 'How often the condition was raised while the entry was not closed.',
  }),
  lastSeenAt: Timestamp,
  acknowledgedAt: Type.Union([Timestamp, Type.Null()]),
  acknowledgedBy: Type.Union([Uuid, Type.Null()]),
  closedAt: Type.Union([Timestamp, Type.Null()]),
  closedBy: Type.Union([Uuid, Type.Null()]),
  closeReason: Type.Union([
    Type.Literal('manual'),
    Type.Literal('cleared'),
    Type.Literal('merged'),
    Type.Null(),
  ]),
  clearedBy: Type.Union([Type.Object({ kind: Type.String(), id: Uuid }), Type.Null()], {
    description: 'What closed the entry by its clear condition (a rule); null otherwise.',
  }),
  details: Type.Record(Type.String(), Type.Unknown()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const FilterFields = {
  accountId: Type.Optional(Uuid),
  status: Type.Optional(
    Type.String({
      pattern: STATUS_LIST,
      description: 'One status or several, comma-separated: `open,acknowledged`.',
    }),
  ),
  severity: Type.Optional(
    Type.String({
      pattern: SEVERITY_LIST,
      description: 'One severity or several, comma-separated: `critical,major`.',
    }),
  ),
  category: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  referenceType: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
  referenceId: Type.Optional(Uuid),
};

export const AlarmLogListQuery = Type.Object(
  { ...ListQuery, ...FilterFields },
  { additionalProperties: false },
);

export const AlarmBulkBody = Type.Union(
  [
    Type.Object(
      { ids: Type.Array(Uuid, { minItems: 1, maxItems: MAX_BULK_ALARMS }) },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        filter: Type.Object(
          { ...FilterFields, searchItems: Type.Optional(Type.String({ maxLength: 200 })) },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  ],
  {
    description: `Listed ids (at most ${MAX_BULK_ALARMS}), or a filter as the list takes it (at most ${MAX_BULK_ALARMS} entries per call, oldest first).`,
  },
);

export const AlarmBulkReply = Type.Object({
  changed: Type.Array(Uuid, { description: 'Entries the action changed.' }),
  unchanged: Type.Array(Uuid, {
    description: 'Entries already in that state (acknowledge: closed ones as well; they stay closed).',
  }),
  notFound: Type.Array(Uuid, {
    description:
      'Listed ids that are missing, of an account the caller cannot reach, or outside its permission scopes: left alone, indistinguishable from missing ones.',
  }),
  more: Type.Boolean({ description: 'The filter selected more entries than one call changes.' }),
});
