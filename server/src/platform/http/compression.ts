import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export type Encoding = 'br' | 'gzip';

/**
 * Up to this size an answer is compressed on the event loop (a list page of 45 kB in about 0.4 ms):
 * handing it to the thread pool cost more CPU than the compression itself. Larger ones go there.
 */
const SYNC_COMPRESS_BYTES = 128 * 1024;

/** Below this a response goes out as it is: the encoding's framing would eat most of the gain. */
export const MIN_COMPRESSED_BYTES = 1024;

/**
 * Types worth compressing: text and the structured formats. Images, fonts, archives, PMTiles and
 * vector tiles are compressed already (or read by byte ranges) and pass untouched.
 */
const COMPRESSIBLE =
  /^(?:text\/(?!event-stream)[\w.+-]+|application\/(?:json|javascript|xml|manifest\+json|[\w.-]+\+(?:json|xml))|image\/svg\+xml)\s*(?:;|$)/i;

export const isCompressible = (contentType: string): boolean => COMPRESSIBLE.test(contentType);

/**
 * The encoding to answer with for an Accept-Encoding header: brotli before gzip when both are
 * acceptable (q > 0, `*` included), none otherwise.
 */
export function chooseEncoding(acceptEncoding: string | undefined): Encoding | null {
  if (!acceptEncoding) return null;
  const quality = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [token, ...params] = part.trim().toLowerCase().split(';');
    if (!token) continue;
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    quality.set(token, q === undefined ? 1 : Number(q));
  }
  const accepts = (encoding: Encoding) => (quality.get(encoding) ?? quality.get('*') ?? 0) > 0;
  if (accepts('br')) return 'br';
  if (accepts('gzip')) return 'gzip';
  return null;
}

// Brotli quality 4 for answers made per request: close to gzip's speed, smaller output. The console's
// hashed assets are compressed once at build time at the highest quality instead.
const BROTLI_OPTIONS = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } };
/**
 * A buffered answer's size is known: brotli then sizes its window to it instead of its 4 MB default,
 * which halves the CPU of compressing a list page (allocating and clearing the large window cost
 * as much as the compression).
 */
const brotliFor = (body: Buffer) => ({
  params: {
    ...BROTLI_OPTIONS.params,
    [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    [zlib.constants.BROTLI_PARAM_LGWIN]: Math.max(16, Math.min(22, Math.ceil(Math.log2(body.length + 1)))),
  },
});
const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/** A buffered answer, encoded on the event loop up to SYNC_COMPRESS_BYTES, on the thread pool beyond. */
function compressBody(encoding: Encoding, body: Buffer): Buffer | Promise<Buffer> {
  const sync = body.length <= SYNC_COMPRESS_BYTES;
  if (encoding === 'br')
    return sync ? zlib.brotliCompressSync(body, brotliFor(body)) : brotli(body, brotliFor(body));
  return sync ? zlib.gzipSync(body) : gzip(body);
}

function compressStream(encoding: Encoding): zlib.BrotliCompress | zlib.Gzip {
  return encoding === 'br' ? zlib.createBrotliCompress(BROTLI_OPTIONS) : zlib.createGzip();
}

/** Adds `accept-encoding` to the reply's Vary header (once). */
export function varyOnEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  const values = typeof vary === 'string' ? vary.split(',').map((v) => v.trim().toLowerCase()) : [];
  if (values.includes('accept-encoding') || values.includes('*')) return;
  reply.header(
    'vary',
    typeof vary === 'string' && vary !== '' ? `${vary}, Accept-Encoding` : 'Accept-Encoding',
  );
}

/**
 * br/gzip for every answer of a compressible type, buffered or streamed, that is not encoded yet.
 * Left alone: HEAD, 204/206/304, `Cache-Control: no-transform`, Server-Sent Events and small bodies.
 * WebSocket upgrades never reach onSend. Files with a pre-compressed copy next to them (the console's
 * hashed assets) are sent as that copy by the console's route, already encoded.
 */
export function registerCompression(app: FastifyInstance): void {
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const contentType = reply.getHeader('content-type');
    if (typeof contentType !== 'string' || !isCompressible(contentType)) return payload;
    if (request.method === 'HEAD' || [204, 206, 304].includes(reply.statusCode)) return payload;
    if (reply.hasHeader('content-encoding')) return payload;
    if (/\bno-transform\b/i.test(String(reply.getHeader('cache-control') ?? ''))) return payload;
    varyOnEncoding(reply);
    const encoding = chooseEncoding(request.headers['accept-encoding']);
    if (!encoding) return payload;

    if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
      const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
      if (body.length < MIN_COMPRESSED_BYTES) return payload;
      const encoded = await compressBody(encoding, body);
      reply.header('content-encoding', encoding).header('content-length', encoded.length);
      return encoded;
    }
    if (payload instanceof Readable) {
      const length = Number(reply.getHeader('content-length'));
      if (Number.isFinite(length) && length < MIN_COMPRESSED_BYTES) return payload;
      reply.header('content-encoding', encoding).removeHeader('content-length');
      const encoder = compressStream(encoding);
      // An error of the source ends the encoder too, so the reply fails instead of hanging.
      payload.once('error', (error) => encoder.destroy(error));
      return payload.pipe(encoder);
    }
    return payload;
  });
}
