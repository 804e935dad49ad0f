import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { Account } from '../accounts/account.entity.js';
import type { Principal } from '../auth/principal.js';
import type { JobHandler, JobRunContext } from '../jobs/job.types.js';
import { CsvReadError, CsvTooManyRowsError, readCsv, textPieces } from '../platform/csv/csv-reader.js';
import { safeErrorMessage } from '../platform/db/database-errors.js';
import { errors } from '../platform/errors.js';
import type { StreamedBody } from '../platform/http/streamed-body.js';
import { ImportReferences } from './device-import.references.js';
import {
  buildDevice,
  IMPORT_COLUMNS,
  INSERT_RECORD_TYPES,
  insertRecord,
  RowError,
  type ImportRow,
} from './device-import.rows.js';
import type { VirtualDevice } from './virtual-device.entity.js';

export { IMPORT_COLUMNS, IMPORT_TEXT_LIMITS } from './device-import.rows.js';

export const DEVICE_IMPORT_JOB = 'virtual-device-import';
export const MAX_IMPORT_ROWS = 250_000;
/**
 * Rows per stored batch, per reference lookup and per multi-row INSERT: the job's work between two
 * turns of the event loop (decode, build, insert) stays a few milliseconds, so the main thread keeps
 * answering other tenants and acknowledging MQTT packets while a large file is imported.
 */
export const IMPORT_BATCH = 250;
/** The reader thread's nice value: parsing a file yields the CPU to the broker and ingest. */
const READER_NICE = 10;

/** The file as the route got it: a streamed text/csv body or the `csv` text of a JSON body. */
export type ImportSource = StreamedBody | string;

/** A checked upload: its columns, its record batches (stored as the job's attachment) and their count. */
export interface ImportUpload {
  columns: string[];
  /** Record batches as JSON (`[[line, cell, …], …]`); throws a 400 AppError when the file turns out bad. */
  batches: AsyncIterable<string>;
  /** Records read so far; the file's total once `batches` is done. */
  rows: () => number;
}

const unreadable = (error: unknown) => {
  if (error instanceof CsvReadError)
    return errors.validation(`The CSV file cannot be read: ${error.message}`, [{ path: '/csv' }]);
  if (error instanceof CsvTooManyRowsError)
    return errors.validation(`At most ${MAX_IMPORT_ROWS} rows per import`, [{ path: '/csv' }]);
  return error;
};
const noRows = () => errors.validation('The CSV file has no device rows', [{ path: '/csv' }]);

/**
 * Reads an import file in the CSV reader thread (platform/csv/csv-reader.ts): resolves once the
 * header is read and checked (unknown columns, an empty or unreadable start are 400 at once); the
 * rest is read while `batches` is consumed, so an unreadable row further down, too many rows or no
 * rows at all still refuse the whole file (400) before anything is queued.
 */
export async function readImportUpload(source: ImportSource): Promise<ImportUpload> {
  const pieces = typeof source === 'string' ? textPieces(source) : source.chunks();
  const reader = readCsv(pieces, {
    batchRows: IMPORT_BATCH,
    maxRows: MAX_IMPORT_ROWS,
    nice: READER_NICE,
    // Batches waiting on the main thread while their INSERTs run: a few, not the whole file.
    window: 4,
  });
  let first;
  try {
    first = await reader.next();
  } catch (error) {
    throw unreadable(error);
  }
  if (first.done || first.value.type !== 'header') {
    await reader.return(undefined);
    throw noRows();
  }
  const columns = first.value.columns;
  const unknown = columns.filter(
    (c) => !(IMPORT_COLUMNS as readonly string[]).includes(c) && !/^kv\..+/.test(c),
  );
  if (unknown.length > 0) {
    await reader.return(undefined);
    throw errors.validation(`Unknown columns: ${unknown.join(', ')}`, [{ path: '/csv', columns: unknown }]);
  }
  let rows = 0;
  async function* batches(): AsyncGenerator<string> {
    try {
      for await (const piece of reader) {
        if (piece.type === 'rows') {
          rows += piece.count;
          yield piece.json;
        } else if (piece.type === 'done' && piece.rows === 0) throw noRows();
      }
    } catch (error) {
      throw unreadable(error);
    }
  }
  return { columns, batches: batches(), rows: () => rows };
}

/**
 * Between two batches the job waits as long as the batch took, so it works at most half the time: an
 * import drives PostgreSQL's CPU and disk as hard as the job lets it, and the broker's spool fsyncs
 * and the main thread then wait behind it (bench:import-load: 200,000 rows in about 2 minutes instead
 * of 1.3, PUBACK p99 a little lower). Always at least one turn of the event loop.
 */
const pause = (batchMs: number) => (batchMs >= 1 ? sleep(batchMs) : nextTurn());

/** What the job needs besides the attachment. */
export interface ImportInput {
  accountId: string;
  columns: string[];
  principal: Pick<Principal, 'accountId' | 'permissionScopeIds'>;
}

function decodeBatch(json: string, columns: string[]): ImportRow[] {
  return (JSON.parse(json) as Array<[number, ...string[]]>).map(([line, ...cells]) => {
    const record: Record<string, string> = {};
    columns.forEach((column, i) => (record[column] = cells[i] ?? ''));
    return { line, record };
  });
}

/**
 * The CSV import job: the file's record batches (stored with the job) become devices, one batch at
 * a time: references it names are loaded, rows built, one multi-row INSERT, progress written, then
 * a pause as long as the batch took. A bad row is recorded as an item error (line, code, message) and never
 * stops the others. Not retryable: a rerun after a lost node would report the devices already
 * imported as duplicates.
 */
export const deviceImportJob: JobHandler = {
  type: DEVICE_IMPORT_JOB,
  retryable: false,
  async run(ctx) {
    const input = ctx.job.input as unknown as ImportInput;
    const account = await ctx.em.findOneOrFail(Account, { id: input.accountId });
    const refs = new ImportReferences(ctx.em, account, input.principal);
    let created = 0;
    let began = performance.now();
    for await (const json of ctx.attachment()) {
      const rows = decodeBatch(json, input.columns);
      await refs.load(rows);
      const devices: Array<{ line: number; device: VirtualDevice }> = [];
      for (const row of rows) {
        try {
          devices.push({ line: row.line, device: buildDevice(row.record, account, refs) });
        } catch (error) {
          if (!(error instanceof RowError)) throw error;
          ctx.error({ row: row.line, code: error.code, message: error.message });
          ctx.advance(0, 1);
        }
      }
      created += await insertBatch(ctx, devices);
      await ctx.flush();
      await pause(performance.now() - began);
      began = performance.now();
    }
    return { created };
  },
};

/**
 * The rows go to PostgreSQL as one JSON parameter that it takes apart itself: MikroORM's insertMany
 * spent about 50 µs a row of main-thread CPU building a statement with 24 parameters a row.
 */
const IMPORT_INSERT_SQL = `
  INSERT INTO virtual_devices (${INSERT_RECORD_TYPES.split(', ')
    .map((c) => c.split(' ')[0])
    .join(', ')})
  SELECT * FROM jsonb_to_recordset(?::jsonb) AS r(${INSERT_RECORD_TYPES})`;

const insertDevices = (ctx: JobRunContext, devices: VirtualDevice[]) =>
  ctx.em.getConnection().execute(IMPORT_INSERT_SQL, [JSON.stringify(devices.map(insertRecord))], 'run');

/**
 * One multi-row INSERT per batch. When it fails (a device created concurrently with the same
 * device_id), the batch is retried row by row so only the clashing rows become errors.
 */
async function insertBatch(ctx: JobRunContext, devices: Array<{ line: number; device: VirtualDevice }>) {
  if (devices.length === 0) return 0;
  try {
    await insertDevices(
      ctx,
      devices.map((d) => d.device),
    );
    ctx.advance(devices.length);
    return devices.length;
  } catch {
    let created = 0;
    for (const { line, device } of devices) {
      try {
        await insertDevices(ctx, [device]);
        ctx.advance(1);
        created++;
      } catch (error) {
        const code = (error as { code?: string }).code === '23505' ? 'DEVICE_ID_TAKEN' : 'IMPORT_ROW_FAILED';
        ctx.error({
          row: line,
          code,
          // The driver's own text is the INSERT with every value of the row: never shown.
          message:
            code === 'DEVICE_ID_TAKEN'
              ? `device_id "${device.deviceId}" is already used`
              : safeErrorMessage(error),
        });
        ctx.advance(0, 1);
      }
    }
    return created;
  }
}
