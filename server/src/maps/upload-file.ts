import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../platform/errors.js';

/**
 * A request body handed over unread, for streaming to disk. The stream sits in a private field, so
 * the input guard (which walks a body's own properties) sees an empty object instead of walking the
 * socket behind it.
 */
export class RawUpload {
  readonly #stream: NodeJS.ReadableStream;

  constructor(stream: NodeJS.ReadableStream) {
    this.#stream = stream;
  }

  stream(): NodeJS.ReadableStream {
    return this.#stream;
  }
}

/**
 * Streams an upload into a temporary file of `folder` and answers its path; the caller renames it
 * into place. Never more than `limit` bytes reach the disk: a declared content-length over the limit
 * is refused before reading, a longer stream when it passes the limit. `checkHead` sees the first
 * `headBytes` bytes as soon as they arrived and may refuse the file (a wrong type is noticed at once,
 * not after gigabytes). On any failure the temporary file is removed, and the error asks the client
 * to close the connection so that it stops sending.
 */
export async function receiveFile(
  body: NodeJS.ReadableStream,
  declaredLength: number | undefined,
  options: { folder: string; limit: number; headBytes: number; checkHead: (head: Buffer) => AppError | null },
): Promise<{ tempPath: string; bytes: number }> {
  const close = { connection: 'close' };
  const tooLarge = () =>
    new AppError(
      'PAYLOAD_TOO_LARGE',
      413,
      `The file is larger than the limit (${options.limit} bytes)`,
      [{ limit: options.limit }],
      close,
    );
  if (declaredLength !== undefined && declaredLength > options.limit) throw tooLarge();
  await fs.mkdir(options.folder, { recursive: true });
  const tempPath = path.join(options.folder, `.upload-${randomUUID()}`);
  let bytes = 0;
  let head: Buffer | null = Buffer.alloc(0);
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      bytes += chunk.length;
      if (bytes > options.limit) return callback(tooLarge());
      if (head) {
        head = Buffer.concat([head, chunk]);
        if (head.length >= options.headBytes) {
          const problem = options.checkHead(head);
          head = null;
          if (problem) return callback(problem);
        }
      }
      callback(null, chunk);
    },
    flush(callback: TransformCallback) {
      // A file shorter than the head is judged on what there is.
      const problem = head ? options.checkHead(head) : null;
      callback(problem);
    },
  });
  const file = (await fs.open(tempPath, 'wx', 0o600)).createWriteStream();
  // Piped, not part of the pipeline: a failure must not destroy the request, or no answer reaches
  // the client; the rest of the body is read and dropped until the answer closes the connection.
  const stopReading = () => {
    body.unpipe(guard);
    body.resume();
  };
  body.on('error', (error: Error) => guard.destroy(error));
  body.on('aborted', () => guard.destroy(new Error('aborted')));
  body.pipe(guard);
  try {
    await pipeline(guard, file);
  } catch (error) {
    stopReading();
    await fs.rm(tempPath, { force: true });
    if (error instanceof AppError) {
      Object.assign(error.headers, close);
      throw error;
    }
    throw new AppError('VALIDATION_ERROR', 400, 'The upload ended early', [], close);
  }
  return { tempPath, bytes };
}
