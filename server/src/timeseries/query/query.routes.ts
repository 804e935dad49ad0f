import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { App, AppContext } from '../../context.js';
import type { Services } from '../../services.js';
import type { Principal } from '../../auth/principal.js';
import { errorResponses, Uuid } from '../../platform/http/schemas.js';
import { CSV_FORMAT_FIELDS } from '../../platform/csv/csv-format.schemas.js';
import { csvStream, type CsvDelimiter } from '../../platform/csv/csv-writer.js';
import type { TimeSeriesQueryResult } from './query.service.js';

const tags = ['timeseries'];
const CSV_TYPE = 'text/csv; charset=utf-8';
/** Longer query text is refused by validation (400): a real query is a few hundred characters. */
export const MAX_QUERY_LENGTH = 10_000;

const inputFields = {
  query: Type.String({
    minLength: 1,
    maxLength: MAX_QUERY_LENGTH,
    description: 'Query text (docs/timeseries-query.md)',
    examples: ["SELECT bucket(1h) AS hour, mean(value) WHERE state.key = 'flow' AND time >= now() - 1d"],
  }),
  accountId: Type.Optional(Uuid),
  includeSubAccounts: Type.Optional(
    Type.Boolean({ description: 'Also read the twins of the accounts below (default false).' }),
  ),
  escapeFormulas: Type.Optional(
    Type.Boolean({
      description:
        "CSV only: text cells starting with = + - @ tab or CR get a leading ' so spreadsheets do not run " +
        'them as formulas (default true); false writes every cell unaltered.',
    }),
  ),
  ...CSV_FORMAT_FIELDS,
};
const QueryBody = Type.Object(inputFields, { additionalProperties: false });
const QueryString = Type.Object(inputFields);

const QueryReply = Type.Object({
  columns: Type.Array(
    Type.Object({
      name: Type.String(),
      type: Type.Union([Type.Literal('time'), Type.Literal('number'), Type.Literal('string')]),
    }),
  ),
  rows: Type.Array(Type.Array(Type.Unknown()), {
    description: 'One array per row, cells in column order: ISO-8601 time, number, string or null.',
  }),
  meta: Type.Object({
    target: Type.String({ description: 'The time-series target that answered.' }),
    rowCount: Type.Integer(),
    limit: Type.Integer(),
  }),
});

const CsvReply = Type.String({
  description:
    "RFC 4180 CSV with a header row; formula-like text cells prefixed with ' unless escapeFormulas is false",
});

const description =
  'Runs a time-series query. JSON `{columns, rows, meta}` by default; with `Accept: text/csv` an ' +
  "RFC 4180 CSV with a header row, text cells that start a formula prefixed with ' (`escapeFormulas: false` " +
  'for raw cells). 400 QUERY_SYNTAX_ERROR / QUERY_INVALID carry `details[0]` ' +
  '`{position, line, column, expected?}`; 422 QUERY_TIMEOUT or QUERY_TOO_LARGE when a query is too expensive.';

export async function timeseriesQueryRoutes(
  app: App,
  _ctx: AppContext,
  { timeseriesQuery }: Services,
): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;
  const config = { auth: 'principal' as const, permission: 'timeseries.read' };

  const wantsCsv = (request: { headers: { accept?: string | undefined } }) =>
    (request.headers.accept ?? '').toLowerCase().includes('text/csv');
  // Streamed in pieces (csvStream): a 100,000-row answer is not written in one go on the main thread.
  const sendCsv = (
    reply: FastifyReply,
    result: TimeSeriesQueryResult,
    input: {
      escapeFormulas?: boolean | undefined;
      delimiter?: CsvDelimiter | undefined;
      decimalSeparator?: '.' | ',' | undefined;
      bom?: boolean | undefined;
    },
  ) =>
    reply.type(CSV_TYPE).send(
      csvStream(
        result.columns.map((c) => c.name),
        result.rows,
        {
          escapeFormulas: input.escapeFormulas ?? true,
          delimiter: input.delimiter ?? ',',
          decimalSeparator: input.decimalSeparator ?? '.',
          bom: input.bom ?? false,
        },
      ),
    );

  app.post(
    '/xapi/v1/timeseries/query',
    {
      config,
      schema: {
        tags,
        summary: 'Query time series (JSON, or CSV with Accept: text/csv)',
        description,
        body: QueryBody,
        response: {
          200: {
            description: 'Rows as JSON, or CSV with Accept: text/csv',
            content: { 'application/json': { schema: QueryReply }, 'text/csv': { schema: CsvReply } },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const result = await timeseriesQuery.run(principal(request), request.body);
      return wantsCsv(request) ? sendCsv(reply, result, request.body) : result;
    },
  );

  app.get(
    '/xapi/v1/timeseries/query',
    {
      config,
      schema: {
        tags,
        summary: 'Query time series with ?query= (same as the POST)',
        description,
        querystring: QueryString,
        response: {
          200: {
            description: 'Rows as JSON, or CSV with Accept: text/csv',
            content: { 'application/json': { schema: QueryReply }, 'text/csv': { schema: CsvReply } },
          },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const result = await timeseriesQuery.run(principal(request), request.query);
      return wantsCsv(request) ? sendCsv(reply, result, request.query) : result;
    },
  );
}
