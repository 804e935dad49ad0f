import path from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { ContainedFile } from './contained-file.js';

/** Content types by extension of what the server serves from folders (the console, site maps). */
const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.geojson': 'application/geo+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.wasm': 'application/wasm',
  '.pmtiles': 'application/vnd.pmtiles',
  '.pbf': 'application/x-protobuf',
  '.mvt': 'application/vnd.mapbox-vector-tile',
};

export const contentTypeOf = (file: string): string =>
  CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';

interface Range {
  start: number;
  end: number;
}

/**
 * One `bytes=` range of a file of `size` bytes: the range, 'unsatisfiable', or null when the header
 * is malformed or asks for several ranges (then the whole file is sent, as HTTP allows).
 */
export function parseRange(header: string, size: number): Range | 'unsatisfiable' | null {
  const match = /^\s*bytes=(\d*)-(\d*)\s*$/.exec(header);
  if (!match || (match[1] === '' && match[2] === '')) return null;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (match[2] !== '' && Number(match[2]) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

const etagMatches = (header: string, etag: string) =>
  header.trim() === '*' || header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag.slice(2));

/**
 * Sends a file opened by `openContainedFile` from its descriptor (never by name again): ETag and
 * Last-Modified with 304 answers, one byte range with 206 (what PMTiles readers ask for), 416 for a
 * range past the end, HEAD without a body. The handle is closed when the answer is done.
 */
export async function sendContainedFile(
  request: FastifyRequest,
  reply: FastifyReply,
  file: ContainedFile,
  contentType = contentTypeOf(file.realPath),
): Promise<FastifyReply> {
  const { stat, handle } = file;
  // The format of @fastify/send, so browsers' cached validators stay valid.
  const etag = `W/"${stat.size.toString(16)}-${stat.mtime.getTime().toString(16)}"`;
  const modified = stat.mtime.toUTCString();
  reply.header('accept-ranges', 'bytes').header('etag', etag).header('last-modified', modified);
  reply.header('content-type', contentType).header('x-content-type-options', 'nosniff');

  const ifNoneMatch = request.headers['if-none-match'];
  const ifModifiedSince = request.headers['if-modified-since'];
  const notModified =
    ifNoneMatch !== undefined
      ? etagMatches(ifNoneMatch, etag)
      : ifModifiedSince !== undefined &&
        Math.floor(stat.mtimeMs / 1000) * 1000 <= Date.parse(ifModifiedSince);
  if (notModified) {
    await handle.close();
    return reply.status(304).send();
  }

  let range: Range = { start: 0, end: stat.size - 1 };
  const ifRange = request.headers['if-range'];
  const rangeFresh = ifRange === undefined || ifRange === etag || ifRange === modified;
  const asked = request.headers.range && rangeFresh ? parseRange(request.headers.range, stat.size) : null;
  if (asked === 'unsatisfiable') {
    await handle.close();
    throw new AppError('RANGE_NOT_SATISFIABLE', 416, 'The byte range is outside the file', [], {
      'content-range': `bytes */${stat.size}`,
    });
  }
  if (asked) {
    range = asked;
    reply.status(206).header('content-range', `bytes ${range.start}-${range.end}/${stat.size}`);
  }
  const length = Math.max(0, range.end - range.start + 1);
  reply.header('content-length', length);
  if (request.method === 'HEAD' || length === 0) {
    await handle.close();
    // An empty stream, not an empty body: Fastify's HEAD handling would set content-length 0.
    return reply.send(Readable.from([]));
  }
  return reply.send(handle.createReadStream({ start: range.start, end: range.end }));
}

/**
 * `Content-Disposition` for a download (RFC 6266): an ASCII `filename` for old clients and the
 * UTF-8 `filename*` browsers prefer, so "Kühlhaus_2026-11-27.csv" keeps its umlaut.
 */
export function attachmentDisposition(name: string): string {
  const stripped = name
    .normalize('NFKD')
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/["\\]/g, '_');
  const dot = stripped.indexOf('.');
  // A name of no Latin letters at all keeps its extension behind a neutral stem.
  const ascii = /[A-Za-z0-9]/.test(dot < 0 ? stripped : stripped.slice(0, dot))
    ? stripped
    : `download${dot < 0 ? '' : stripped.slice(dot)}`;
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
