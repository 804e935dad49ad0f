import { Type, type TSchema } from 'typebox';

/** Shared pieces of every route schema; they also drive the OpenAPI document. */

export const Uuid = Type.String({ format: 'uuid', description: 'UUID (v7)' });
export const IdParams = Type.Object({ id: Uuid });
export const Timestamp = Type.String({ format: 'date-time' });

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ examples: ['VALIDATION_ERROR'] }),
      message: Type.String(),
      details: Type.Array(Type.Unknown()),
    }),
  },
  { $id: 'ErrorBody', description: 'Every error answers with this body.' },
);

export const MAX_PAGE_SIZE = 500;

export const ListQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 25 })),
  sort: Type.Optional(
    Type.String({
      maxLength: 200,
      description: 'Comma-separated fields; `title`, `+title` (ascending) or `-title` (descending).',
    }),
  ),
  searchItems: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive search.' })),
};

export const ListMeta = Type.Object({
  page: Type.Integer(),
  pageSize: Type.Integer(),
  total: Type.Integer(),
  totalEstimated: Type.Optional(
    Type.Boolean({
      description: 'true: `total` is an estimate (more than 10,000 matching rows), not a count.',
    }),
  ),
  nextCursor: Type.Optional(
    Type.String({ description: 'Pass as `after` for the rows after this page (keyset paging).' }),
  ),
});

/** Keyset paging, for the lists that offer it next to page numbers. */
export const KeysetQuery = {
  after: Type.Optional(
    Type.String({
      maxLength: 1000,
      description:
        'The `meta.nextCursor` of the previous page: the rows after it, as fast at any depth (one sort field; `page` is then ignored).',
    }),
  ),
};

export const listReply = <T extends TSchema>(item: T) =>
  Type.Object({ data: Type.Array(item), meta: ListMeta });

/** Error replies every authenticated route can give; listed so the OpenAPI document shows them. */
export const errorResponses = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  413: ErrorBody,
  422: ErrorBody,
  429: ErrorBody,
};
