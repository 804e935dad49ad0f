import type { FastifyReply, FastifyRequest } from 'fastify';
import { chooseEncoding, isCompressible, varyOnEncoding } from './compression.js';
import { openContainedFile, type ContainedFile } from './contained-file.js';
import { contentTypeOf } from './file-reply.js';

const SUFFIX = { br: '.br', gzip: '.gz' } as const;

/**
 * Opens `relative` below `root` like `openContainedFile`, but prefers its pre-compressed copy
 * (`name.br`, `name.gz`, written by the console's build) in an encoding the request accepts; then
 * the reply carries Content-Encoding and the original's content type. A range request gets the
 * plain file: its byte offsets mean the plain file's bytes.
 */
export async function openPreferringCompressed(
  root: string,
  relative: string,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<{ file: ContainedFile; contentType: string } | null> {
  const contentType = contentTypeOf(relative);
  if (isCompressible(contentType)) {
    varyOnEncoding(reply);
    const encoding = request.headers.range ? null : chooseEncoding(request.headers['accept-encoding']);
    const variant = encoding ? await openContainedFile(root, `${relative}${SUFFIX[encoding]}`) : null;
    if (variant) {
      reply.header('content-encoding', encoding);
      return { file: variant, contentType };
    }
  }
  const file = await openContainedFile(root, relative);
  return file ? { file, contentType } : null;
}
