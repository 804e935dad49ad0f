import { Type, type TLiteral } from 'typebox';
import { CSV_DELIMITERS } from '../platform/csv/csv-writer.js';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';
import { JobReply } from '../jobs/job.schemas.js';
import {
  AVERAGES,
  CONDITION_FIELDS,
  EXPORT_SUBJECTS,
  EXPORT_TIME_FORMATS,
  RELATIVE_RANGES,
} from './export-plan.types.js';

const literals = <T extends string>(values: readonly T[], options: { description?: string } = {}) =>
  Type.Union(values.map((v) => Type.Literal(v)) as [TLiteral<T>], options);

export const ExportConditionSchema = Type.Object(
  {
    field: literals(CONDITION_FIELDS),
    key: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'The custom property (field property; a device’s keyValueData key).',
      }),
    ),
    value: Type.String({
      maxLength: 200,
      description: 'For type: a device driver id; twin and device: the id of the subtree’s root.',
    }),
    not: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const ExportSelectionSchema = Type.Object(
  {
    subject: Type.Optional({ ...literals(EXPORT_SUBJECTS), description: 'twins (default) or devices.' }),
    operator: literals(['and', 'or'] as const),
    conditions: Type.Array(ExportConditionSchema, { maxItems: 50 }),
    states: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      maxItems: 200,
      description: 'State keys (columns) to export, in order; empty: every state of the twins or devices.',
    }),
  },
  { additionalProperties: false },
);

export const ExportRangeSchema = Type.Union([
  Type.Object({ relative: literals(RELATIVE_RANGES) }, { additionalProperties: false }),
  Type.Object(
    {
      from: Type.String({
        maxLength: 40,
        description: 'Local time in the plan’s zone (2026-10-01T00:00) or an ISO instant.',
      }),
      to: Type.String({ maxLength: 40, description: 'Exclusive end, as from.' }),
    },
    { additionalProperties: false },
  ),
]);

export const ExportShapeSchema = Type.Object(
  {
    layout: literals(['points', 'clusterPerPacket'] as const),
    average: Type.Union([literals(AVERAGES), Type.Null()]),
    address: Type.Boolean(),
    geolocation: Type.Boolean(),
    customProperties: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 }),
  },
  { additionalProperties: false },
);

export const ExportFormatSchema = Type.Object(
  {
    delimiter: literals(CSV_DELIMITERS),
    decimalSeparator: literals(['.', ','] as const),
    bom: Type.Boolean({ description: 'Start the file with a UTF-8 byte order mark (Excel).' }),
    headerNames: Type.Record(Type.String({ maxLength: 120 }), Type.String({ maxLength: 200 })),
    escapeFormulas: Type.Boolean({
      description: "Text cells starting with = + - @ tab or CR get a leading ' (docs/exports.md).",
    }),
    gzip: Type.Boolean(),
    timeFormat: Type.Optional(
      literals(EXPORT_TIME_FORMATS, {
        description:
          'iso8601 (default): 2026-10-25T02:30:00+01:00. spreadsheet: 2026-10-25 02:30:00, wall-clock time in timeZone that spreadsheets read as a date (ambiguous in the repeated hour of a DST change).',
      }),
    ),
  },
  { additionalProperties: false },
);

const definitionFields = {
  selection: ExportSelectionSchema,
  range: ExportRangeSchema,
  timeZone: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'IANA time zone of the range, times and averages.',
  }),
  shape: ExportShapeSchema,
  format: ExportFormatSchema,
};

const planFields = {
  title: Type.String({ minLength: 1, maxLength: 200 }),
  ...definitionFields,
  mailConnectorId: Type.Union([Uuid, Type.Null()], {
    description: 'An smtp-mail connector of the same account.',
  }),
  mailTo: Type.Array(Type.String({ format: 'email', maxLength: 200 }), { maxItems: 50 }),
  schedule: Type.Union([Type.String({ minLength: 1, maxLength: 120 }), Type.Null()], {
    description: 'A cron expression in the plan’s time zone; null: on demand only.',
  }),
};

export const ExportPlanCreate = Type.Object(
  {
    title: planFields.title,
    accountId: Type.Optional(Uuid),
    selection: Type.Optional(planFields.selection),
    range: Type.Optional(planFields.range),
    timeZone: Type.Optional(planFields.timeZone),
    shape: Type.Optional(planFields.shape),
    format: Type.Optional(planFields.format),
    mailConnectorId: Type.Optional(planFields.mailConnectorId),
    mailTo: Type.Optional(planFields.mailTo),
    schedule: Type.Optional(planFields.schedule),
  },
  { additionalProperties: false },
);

export const ExportPlanUpdate = Type.Partial(Type.Object(planFields), { additionalProperties: false });

export const ExportPreviewBody = Type.Object(
  {
    accountId: Type.Optional(Uuid),
    ...definitionFields,
  },
  { additionalProperties: false },
);

export const ExportPreviewReply = Type.Object({
  columns: Type.Array(Type.String()),
  rows: Type.Array(Type.Array(Type.String()), {
    description: 'The first 20 rows, each cell as the file writes it.',
  }),
  from: Timestamp,
  to: Timestamp,
});

export const ExportPlanReply = Type.Object({
  id: Uuid,
  accountId: Uuid,
  ...planFields,
  permissionScopeIds: Type.Union([Type.Array(Uuid), Type.Null()]),
  nextRunAt: Type.Union([Timestamp, Type.Null()]),
  lastRunAt: Type.Union([Timestamp, Type.Null()]),
  lastJob: Type.Union([JobReply, Type.Null()], {
    description: 'The latest run: status, progress, queue position.',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const ExportPlanListQuery = Type.Object(
  { ...ListQuery, accountId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

export const ExportFileParams = Type.Object({ id: Uuid });
export const ExportLinkParams = Type.Object({ token: Type.String({ minLength: 10, maxLength: 400 }) });
