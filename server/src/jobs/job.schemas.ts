import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

export const JobStatusSchema = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('finished'),
  Type.Literal('failed'),
]);

export const JobItemErrorSchema = Type.Object({
  row: Type.Optional(Type.Integer()),
  itemId: Type.Optional(Type.String()),
  code: Type.String(),
  message: Type.String(),
});

export const JobReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  type: Type.String(),
  status: JobStatusSchema,
  /** Place in the queue while queued (1 = next); null otherwise. Queued jobs are never "in progress". */
  queuePosition: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Place in the queue while queued (1 = next); null once the job runs or ended.',
  }),
  subjectId: Type.Union([Uuid, Type.Null()]),
  total: Type.Integer(),
  progress: Type.Integer(),
  succeeded: Type.Integer(),
  failed: Type.Integer(),
  errors: Type.Array(JobItemErrorSchema, {
    description: 'Item errors, at most 1000 (see `failed` for the count).',
  }),
  result: Type.Record(Type.String(), Type.Unknown()),
  createdAt: Timestamp,
  startedAt: Type.Union([Timestamp, Type.Null()]),
  finishedAt: Type.Union([Timestamp, Type.Null()]),
  updatedAt: Timestamp,
});

export const JobListQuery = Type.Object(
  {
    ...ListQuery,
    accountId: Type.Optional(Uuid),
    status: Type.Optional(JobStatusSchema),
    type: Type.Optional(Type.String({ maxLength: 60 })),
  },
  { additionalProperties: false },
);
