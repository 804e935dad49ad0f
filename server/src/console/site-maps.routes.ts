import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, AppContext } from '../context.js';
import { errors } from '../platform/errors.js';
import { openContainedFile } from '../platform/http/contained-file.js';
import { sendContainedFile } from '../platform/http/file-reply.js';

/** The folder under STELLWERK_DATA_DIR whose files the console's map may use (`/maps/site.pmtiles`). */
export const SITE_MAPS_FOLDER = 'maps';

/**
 * Serves a site's own map files (a `.pmtiles` archive, a MapLibre style JSON, glyphs, sprites) from
 * `<STELLWERK_DATA_DIR>/maps/` at `/maps/…`, so the console's map needs no internet. PMTiles readers
 * fetch byte ranges, answered with 206. The folder sits beside the server's secrets (secret.key), so
 * only regular files whose real path stays inside it are served (platform/http/contained-file.ts):
 * a symlink out of the folder, a directory, a device or a FIFO is a 404.
 */
export function siteMapRoutes(app: App, ctx: AppContext): void {
  const root = path.join(ctx.config.dataDir, SITE_MAPS_FOLDER);

  app.get(
    '/maps/*',
    {
      // Any signed-in caller: the console's map sends its cookie with same-origin fetches.
      config: { auth: 'principal' },
      schema: { hide: true },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const name = (request.params as { '*': string })['*'];
      const file = name ? await openContainedFile(root, name) : null;
      if (!file) throw errors.notFound(`Map file /maps/${name}`);
      // Site maps change rarely but may be replaced in place: revalidate, a 304 costs little.
      reply.header('cache-control', 'no-cache');
      return sendContainedFile(request, reply, file);
    },
  );
}
