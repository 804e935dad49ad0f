import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../worker-thread.js';

/**
 * Reads CSV (RFC 4180, a header row, BOM allowed, cells trimmed, empty lines skipped) off the main
 * thread. The main thread runs both the HTTP server and the MQTT broker, and csv-parse takes tens of
 * microseconds a row: a 28 MB file parsed there held every other tenant's requests and every PUBACK
 * for seconds. Here a worker thread at a lower priority parses; the main thread only hands over the
 * pieces and receives the header and batches of records as JSON text, which it can store as they
 * are or decode one batch at a time.
 */

export interface CsvReaderSetup {
  /** Records per `rows` batch. */
  batchRows: number;
  /** More records than this stop the reading with `CsvTooManyRowsError`. */
  maxRows: number;
  /** Nice value of the thread (Linux); 0 keeps the normal priority. */
  nice: number;
  /** Batches the thread may send before the reader took them (each taken one lets it send one more). */
  window: number;
}

export type ToCsvReader = { type: 'data'; data: Uint8Array | string } | { type: 'end' } | { type: 'more' };

export type FromCsvReader =
  | { type: 'header'; columns: string[] }
  /** `json` is `[[line, cell, …], …]`; `line` is the file line the record ends on (header = 1). */
  | { type: 'rows'; json: string; count: number }
  | { type: 'done'; rows: number }
  | { type: 'failed'; message: string }
  | { type: 'too-many' };

export type CsvPiece = Extract<FromCsvReader, { type: 'header' | 'rows' | 'done' }>;

/** The file is not CSV as read here (csv-parse's message, with the line). */
export class CsvReadError extends Error {}
export class CsvTooManyRowsError extends Error {}

/** Pieces handed over to the thread (characters or bytes): small enough that each copy is quick. */
const PIECE_CHARS = 64 * 1024;
/** Handed over between two turns of the event loop: a few milliseconds of copying at most. */
const BYTES_PER_TURN = 1024 * 1024;

export function* textPieces(text: string): Generator<string> {
  for (let i = 0; i < text.length; i += PIECE_CHARS) yield text.slice(i, i + PIECE_CHARS);
}

/**
 * Parses `source` in a worker thread: yields the header (`header`, once, first), record batches
 * (`rows`) and finally `done` with the record count; throws CsvReadError or CsvTooManyRowsError.
 * An empty file yields only `done`. Stopping early (break, a throw in the loop) ends the thread.
 */
export async function* readCsv(
  source: Iterable<Uint8Array | string>,
  options: CsvReaderSetup,
): AsyncGenerator<CsvPiece> {
  const worker = startWorkerThread(import.meta.url, 'csv-reader.thread', options);
  const inbox: FromCsvReader[] = [];
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  worker.on('message', (message: FromCsvReader) => {
    inbox.push(message);
    wake?.();
  });
  worker.on('error', (error: Error) => {
    failure = error;
    wake?.();
  });
  worker.on('exit', () => {
    failure ??= new Error('the CSV reader thread ended early');
    wake?.();
  });
  let stopped = false;
  feed(worker, source, () => stopped).catch((error: unknown) => {
    failure = error instanceof Error ? error : new Error(String(error));
    wake?.();
  });
  try {
    for (;;) {
      const message = inbox.shift();
      if (!message) {
        if (failure) throw failure;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      if (message.type === 'failed') throw new CsvReadError(message.message);
      if (message.type === 'too-many') throw new CsvTooManyRowsError(`more than ${options.maxRows} rows`);
      yield message;
      if (message.type === 'done') return;
      if (message.type === 'rows') worker.postMessage({ type: 'more' } satisfies ToCsvReader);
    }
  } finally {
    stopped = true;
    worker.removeAllListeners();
    await worker.terminate();
  }
}

async function feed(worker: Worker, source: Iterable<Uint8Array | string>, stopped: () => boolean) {
  let bytes = 0;
  for (const whole of source) {
    // A body handed over in one piece (a test's inject, a proxy that buffers) goes in slices too.
    for (let at = 0; at < whole.length; at += PIECE_CHARS) {
      if (stopped()) return;
      const data =
        typeof whole === 'string' ? whole.slice(at, at + PIECE_CHARS) : ownBytes(whole, at, at + PIECE_CHARS);
      worker.postMessage({ type: 'data', data } satisfies ToCsvReader);
      bytes += data.length;
      if (bytes >= BYTES_PER_TURN) {
        bytes = 0;
        await nextTurn();
      }
    }
  }
  if (!stopped()) worker.postMessage({ type: 'end' } satisfies ToCsvReader);
}

/**
 * The bytes from `start` to `end` in an ArrayBuffer of their own: posting a view (a socket chunk, a
 * slice) would copy the whole buffer beneath it to the thread.
 */
function ownBytes(bytes: Uint8Array, start: number, end: number): Uint8Array {
  const view = bytes.subarray(start, end);
  if (view.byteOffset === 0 && view.byteLength === view.buffer.byteLength) return view;
  const copy = new Uint8Array(view.byteLength);
  copy.set(view);
  return copy;
}
