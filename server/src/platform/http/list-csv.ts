import { AsyncLocalStorage } from 'node:async_hooks';
import { Readable } from 'node:stream';
import { RequestContext } from '@mikro-orm/postgresql';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { CSV_FORMAT_FIELDS } from '../csv/csv-format.schemas.js';
import { csvLine, UTF8_BOM, type CsvOptions, type CsvValue } from '../csv/csv-writer.js';
import { MAX_PAGE_SIZE } from './schemas.js';

/**
 * CSV of every XAPI list route, in one place: a GET route whose 200 reply is `listReply(…)` also answers
 * `Accept: text/csv` or `?format=csv` with all rows that match its filters, search and sort (not only
 * one page), up to LIST_CSV_MAX_ROWS. The route's own handler reads each page (pageSize 500), so
 * authorization, tenant scope, filters and order are exactly the JSON list's. Columns are the reply
 * item's properties in schema order, named as in the JSON; arrays of plain values are joined with
 * "; ", objects written as JSON. Cells go through csv-writer (formula cells escaped), in the
 * spreadsheet format the request asks for (`delimiter`, `decimalSeparator`, `bom`, as the time-series query's).
 *
 * Paging is by offset, as the JSON list's: a row written while the download runs can appear twice or
 * not at all, the same as when a user pages through the list.
 */

/** The most rows one list download holds; `X-Total-Count` tells how many matched. */
export const LIST_CSV_MAX_ROWS = 100_000;

export interface ListCsvColumns {
  /** The reply item's property names, in schema order. */
  names: string[];
}

/** The download's own query fields; the rest are the list's filters, search and sort. */
type ListCsvQuery = Record<string, unknown> & {
  format?: string;
  delimiter?: CsvOptions['delimiter'];
  decimalSeparator?: CsvOptions['decimalSeparator'];
  bom?: boolean;
};

type ListHandler = (this: unknown, request: FastifyRequest, reply: FastifyReply) => unknown;

interface Page {
  data: Array<Record<string, unknown>>;
  meta: { total: number };
}

/** The item schema of a `listReply(item)` reply schema, or undefined for any other reply. */
export function listItemSchema(schema: unknown): TSchema | undefined {
  const props = (
    schema as { properties?: Record<string, { type?: string; items?: TSchema; properties?: object }> }
  )?.properties;
  if (!props || props.data?.type !== 'array' || !props.data.items) return undefined;
  const meta = props.meta?.properties as Record<string, unknown> | undefined;
  if (!meta || !('total' in meta) || !('pageSize' in meta)) return undefined;
  return props.data.items;
}

export function csvColumns(item: TSchema): ListCsvColumns {
  const properties = (item as { properties?: Record<string, unknown> }).properties ?? {};
  return { names: Object.keys(properties) };
}

/** One cell: plain values as they are, dates as ISO text, lists of plain values joined, the rest as JSON. */
export function csvCell(value: unknown): CsvValue {
  if (value === null || value === undefined) return value;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  if (value instanceof Date) return value.toISOString();
  if (
    Array.isArray(value) &&
    value.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
  ) {
    return value.join('; ');
  }
  return JSON.stringify(value);
}

export function wantsCsv(request: FastifyRequest): boolean {
  if ((request.query as { format?: string } | undefined)?.format === 'csv') return true;
  const accept = request.headers.accept ?? '';
  return accept.split(',')[0]!.trim().toLowerCase().startsWith('text/csv');
}

const FormatParam = Type.Optional(
  Type.Union([Type.Literal('json'), Type.Literal('csv')], {
    description: `\`csv\` (or \`Accept: text/csv\`): every matching row as CSV, in the list's order, at most ${LIST_CSV_MAX_ROWS} rows (\`X-Total-Count\` tells how many matched); paging parameters are ignored.`,
  }),
);

function withFormatParam(querystring: unknown): TSchema {
  const qs = (querystring ?? Type.Object({})) as TSchema & { properties?: Record<string, unknown> };
  return { ...qs, properties: { ...(qs.properties ?? {}), format: FormatParam, ...CSV_FORMAT_FIELDS } };
}

/** The download's file name: the list's last path segment and the day, `virtual-devices-2026-11-27.csv`. */
function fileName(url: string, now: Date): string {
  const segment =
    url
      .split('?')[0]!
      .split('/')
      .filter((part) => part && !part.startsWith(':'))
      .pop() ?? 'list';
  return `${segment}-${now.toISOString().slice(0, 10)}.csv`;
}

/** Turns every list route into one that can also answer CSV. Call before the routes are registered. */
export function registerListCsv(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    // The XAPI only: the legacy hub API answers as the spec defines it.
    if (![route.method].flat().includes('GET') || !route.url.startsWith('/xapi/')) return;
    const reply200 = (route.schema?.response as Record<string, unknown> | undefined)?.[200];
    const item = listItemSchema(reply200);
    if (!item) return;
    const columns = csvColumns(item);
    route.schema = { ...route.schema, querystring: withFormatParam(route.schema?.querystring) };
    const handler = route.handler as ListHandler;
    route.handler = async function (this: unknown, request, reply) {
      if (!wantsCsv(request)) return handler.call(this, request, reply);
      return sendListCsv(
        request,
        reply,
        (query) => {
          (request as { query: unknown }).query = query;
          return handler.call(this, request, reply) as Promise<Page>;
        },
        columns,
        route.url,
      );
    };
  });
}

async function sendListCsv(
  request: FastifyRequest,
  reply: FastifyReply,
  readPage: (query: Record<string, unknown>) => Promise<Page>,
  columns: ListCsvColumns,
  url: string,
): Promise<FastifyReply> {
  const { format: _format, delimiter, decimalSeparator, bom, ...query } = request.query as ListCsvQuery;
  const base: Record<string, unknown> = { ...query, pageSize: MAX_PAGE_SIZE };
  const options: CsvOptions = { delimiter, decimalSeparator };
  // The first page before any byte is sent: a refusal (permission, unknown account) stays a JSON error.
  const first = await readPage({ ...base, page: 1 });
  if (!Array.isArray(first?.data)) throw new Error(`${url} answered no list`);
  const total = Math.min(first.meta.total, LIST_CSV_MAX_ROWS);
  // Later pages run in the request's async context, so the request's EntityManager serves them.
  const inRequest = AsyncLocalStorage.snapshot();
  const body = Readable.from(
    (async function* () {
      yield (bom ? UTF8_BOM : '') + csvLine(columns.names, options);
      let written = 0;
      let page: Page = first;
      for (let number = 1; ; number++) {
        const rows = page.data.slice(0, LIST_CSV_MAX_ROWS - written);
        yield rows
          .map((row) =>
            csvLine(
              columns.names.map((name) => csvCell(row[name])),
              options,
            ),
          )
          .join('');
        written += rows.length;
        if (written >= total || page.data.length === 0) return;
        // Drops the rows read so far from the identity map, so a long download stays small.
        inRequest(() => RequestContext.getEntityManager()?.clear());
        page = await inRequest(() => readPage({ ...base, page: number + 1 }));
      }
    })(),
    { objectMode: false },
  );
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${fileName(url, new Date())}"`)
    .header('x-total-count', String(first.meta.total))
    .send(body);
}
