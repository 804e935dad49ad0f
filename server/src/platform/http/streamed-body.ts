import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { AppError } from '../errors.js';
import { compileValidator } from './validation.js';

/**
 * A large request body kept as the chunks it arrived in. Fastify's string parser joins and decodes
 * the whole body at once on the main thread (tens of milliseconds for 28 MB, more when the pages are
 * new), and the input guard then scans it; this body is never joined: its chunks go to whoever reads
 * it (a worker thread). The chunks are private so that nothing walks the object by accident.
 */
export class StreamedBody {
  readonly #chunks: Buffer[];
  readonly byteLength: number;

  constructor(chunks: Buffer[], byteLength: number) {
    this.#chunks = chunks;
    this.byteLength = byteLength;
  }

  chunks(): readonly Buffer[] {
    return this.#chunks;
  }
}

const tooLarge = (limit: number) =>
  new AppError('PAYLOAD_TOO_LARGE', 413, `Request body is larger than the limit (${limit} bytes)`);

/**
 * A content-type parser (`addContentTypeParser(type, streamedBodyParser(limit))`) that collects the
 * body as a StreamedBody of at most `limit` bytes (413 beyond; a declared content-length over the
 * limit is refused before reading).
 */
export function streamedBodyParser(limit: number) {
  return (request: FastifyRequest, payload: NodeJS.ReadableStream): Promise<StreamedBody> =>
    new Promise((resolve, reject) => {
      const declared = Number(request.headers['content-length']);
      if (declared > limit) return reject(tooLarge(limit));
      const chunks: Buffer[] = [];
      let length = 0;
      const done = (error?: Error) => {
        payload.removeListener('data', onData);
        payload.removeListener('end', onEnd);
        payload.removeListener('error', onError);
        payload.removeListener('close', onClose);
        if (error) reject(error);
        else resolve(new StreamedBody(chunks, length));
      };
      const onData = (chunk: Buffer | string) => {
        const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        length += buffer.length;
        if (length > limit) return done(tooLarge(limit));
        chunks.push(buffer);
      };
      const onEnd = () =>
        !Number.isNaN(declared) && declared !== length
          ? done(
              new AppError('VALIDATION_ERROR', 400, 'The body is shorter or longer than its content-length'),
            )
          : done();
      const onError = (error: Error) => done(Object.assign(error, { statusCode: 400 }));
      // A connection closed before the end: nothing will answer, but the chunks are let go.
      const onClose = () => done(new AppError('VALIDATION_ERROR', 400, 'The body ended early'));
      payload.on('data', onData);
      payload.on('end', onEnd);
      payload.on('error', onError);
      payload.on('close', onClose);
      payload.resume();
    });
}

/**
 * The route's validator compiler when its body may be a StreamedBody: that body passes (its schema
 * says `string` for the API description), every other body and every other part is validated as
 * everywhere else.
 */
export const acceptStreamedBody: FastifySchemaCompiler<unknown> = (route) => {
  const validate = compileValidator(route);
  if (route.httpPart !== 'body') return validate;
  const wrapped = (data: unknown, context?: unknown) =>
    data instanceof StreamedBody || (validate as (d: unknown, c?: unknown) => boolean)(data, context);
  // Fastify passes the parent data to Ajv validators (it recognises them by schemaEnv) and reads errors.
  return Object.defineProperties(wrapped, {
    schemaEnv: { value: (validate as { schemaEnv?: unknown }).schemaEnv },
    errors: { get: () => (validate as { errors?: unknown }).errors },
  });
};
