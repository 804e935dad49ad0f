import { parentPort, workerData } from 'node:worker_threads';
import { parse } from 'csv-parse';
import { lowerThreadPriority } from '../worker-thread.js';
import type { CsvReaderSetup, FromCsvReader, ToCsvReader } from './csv-reader.js';

/**
 * The CSV reader thread: parses what the main thread sends (bytes or text, in pieces) with
 * csv-parse's streaming parser and answers with the header row, then batches of records as JSON
 * text (`[[line, cell, …], …]`), so the main thread never runs the parser and never touches a
 * record before it needs it. At most `window` batches are unanswered at a time (the main thread
 * sends `more` for each one it took): the input waits here, not as strings on the main thread's heap.
 * Runs at a lower CPU priority: reading a file is background work.
 */

const port = parentPort!;
const setup = workerData as CsvReaderSetup;
const post = (message: FromCsvReader) => port.postMessage(message);
lowerThreadPriority(setup.nice);

const parser = parse({ info: true, skip_empty_lines: true, trim: true, bom: true });
const input: Array<Uint8Array | string> = [];
let ended = false;
let credit = setup.window;
let header = false;
let rows = 0;
let batch: Array<Array<number | string>> = [];
let stopped = false;

const flush = () => {
  if (batch.length === 0) return;
  post({ type: 'rows', json: JSON.stringify(batch), count: batch.length });
  batch = [];
  credit--;
};

const stop = (message: FromCsvReader) => {
  stopped = true;
  post(message);
  parser.destroy();
};

/** Feeds the parser while the main thread has room for more batches. */
const pump = () => {
  while (!stopped && credit > 0 && input.length > 0) {
    const data = input.shift()!;
    parser.write(
      typeof data === 'string' ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength),
    );
    drain();
  }
  if (!stopped && credit > 0 && ended && input.length === 0) {
    ended = false;
    parser.end();
  }
};

const drain = () => {
  let item: { record: string[]; info: { lines: number } } | null;
  while (!stopped && (item = parser.read() as typeof item) !== null) {
    if (!header) {
      header = true;
      post({ type: 'header', columns: item.record });
      continue;
    }
    if (++rows > setup.maxRows) return stop({ type: 'too-many' });
    batch.push([item.info.lines, ...item.record]);
    if (batch.length >= setup.batchRows) flush();
  }
};

parser.on('readable', drain);
parser.on('error', (error: Error) => {
  if (!stopped) stop({ type: 'failed', message: error.message });
});
parser.on('end', () => {
  if (stopped) return;
  drain();
  flush();
  post({ type: 'done', rows });
});

port.on('message', (message: ToCsvReader) => {
  if (message.type === 'data') input.push(message.data);
  else if (message.type === 'end') ended = true;
  else credit++;
  pump();
});
