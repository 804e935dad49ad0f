import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, AppContext } from '../context.js';
import { errors } from '../platform/errors.js';

/** The folder under STELLWERK_DATA_DIR whose files the console's map may use (`/maps/site.pmtiles`). */
export const SITE_MAPS_FOLDER = 'maps';

/**
 * Content types of the files a site's basemap is made of. A PMTiles archive has its IANA type;
 * anything not listed keeps what the file server guesses from the extension.
 */
const CONTENT_TYPES: Record<string, string> = {
  '.pmtiles': 'application/vnd.pmtiles',
  '.json': 'application/json; charset=utf-8',
  '.pbf': 'application/x-protobuf',
  '.mvt': 'application/vnd.mapbox-vector-tile',
};

/**
 * Serves a site's own map files (a `.pmtiles` archive, a MapLibre style JSON, glyphs, sprites) from
 * `<STELLWERK_DATA_DIR>/maps/` at `/maps/…`, so the console's map needs no internet. PMTiles readers
 * fetch byte ranges, which the file server answers with 206. Needs `reply.sendFile`, so it is
 * registered by the console routes after @fastify/static.
 */
export function siteMapRoutes(app: App, ctx: AppContext): void {
  const root = path.join(ctx.config.dataDir, SITE_MAPS_FOLDER);

  app.get(
    '/maps/*',
    {
      // Any signed-in caller: the console's map sends its cookie with same-origin fetches.
      config: { auth: 'principal' },
      schema: { hide: true },
      onSend: async (request, reply, payload) => {
        const type = CONTENT_TYPES[path.extname(request.url.split('?')[0] ?? '').toLowerCase()];
        if (type && reply.statusCode < 300) reply.header('content-type', type);
        return payload;
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const file = (request.params as { '*': string })['*'];
      if (!file || file.endsWith('/')) throw errors.notFound(`Map file /maps/${file}`);
      // Site maps change rarely but may be replaced in place: revalidate, a 304 costs little.
      reply.header('cache-control', 'no-cache');
      // The file server refuses paths outside the folder ("..", encoded or not) and answers ranges.
      return reply.sendFile(file, root, { cacheControl: false, dotfiles: 'deny' });
    },
  );
}
