import fs from 'node:fs';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import { AppError, errors } from '../platform/errors.js';
import { openContainedFile } from '../platform/http/contained-file.js';
import { sendContainedFile } from '../platform/http/file-reply.js';
import { openPreferringCompressed } from '../platform/http/precompressed-file.js';
import { VERSION } from '../version.js';
import { contentSecurityPolicy } from './content-security-policy.js';
import { siteMapRoutes } from './site-maps.routes.js';

const tags = ['console'];

/** Paths that belong to the APIs and the server itself: never answered with the console's page. */
const SERVER_PREFIXES = ['/xapi', '/api', '/hub', '/health', '/metrics', '/mqtt'];
/** The router's `maxParamLength` (app.ts): past it an API route does not match and lands here. */
const MAX_PARAM_LENGTH = 200;

export const CONSOLE_NOT_BUILT_TEXT = (dir: string) =>
  [
    'The Stellwerk web console is not built.',
    '',
    `It is served from ${dir}, which has no index.html.`,
    'Build it with `npm run build` (or start with `npm start`, which builds it when needed),',
    'or point STELLWERK_CONSOLE_DIR at a built console.',
    '',
    'The API works without it: see /xapi/v1/docs.',
  ].join('\n');

export const ConsoleConfig = Type.Object({
  apiTimeoutMs: Type.Integer({ description: 'How long the console waits for an API answer' }),
  version: Type.String({ description: 'Server version' }),
});

/**
 * Serves the built console (renderer/, built into STELLWERK_CONSOLE_DIR) at `/`, with the page
 * itself answering every other non-API GET so that deep links work, and the console's settings.
 */
export async function consoleRoutes(app: App, ctx: AppContext): Promise<void> {
  const root = ctx.config.consoleDir;
  const indexFile = path.join(root, 'index.html');
  siteMapRoutes(app, ctx);
  const policy = contentSecurityPolicy(ctx.config.mapOrigins);

  app.get(
    '/api/v1/console/config',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: "The web console's settings (API timeout from STELLWERK_API_TIMEOUT_MS)",
        security: [],
        response: { 200: ConsoleConfig },
      },
    },
    async () => ({ apiTimeoutMs: ctx.config.apiTimeoutMs, version: VERSION }),
  );

  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    // Checked per request: building the console while the server runs needs no restart.
    const file = fs.existsSync(indexFile) ? await openContainedFile(root, 'index.html') : null;
    if (!file) {
      return reply.status(200).type('text/plain; charset=utf-8').send(CONSOLE_NOT_BUILT_TEXT(root));
    }
    reply.header('content-security-policy', policy);
    reply.header('cache-control', 'no-cache');
    return sendContainedFile(request, reply, file);
  };

  app.get('/', { config: { auth: 'public' }, schema: { hide: true } }, async (request, reply) =>
    page(request, reply),
  );

  app.get(
    '/*',
    { config: { auth: 'public' }, schema: { hide: true } },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const urlPath = request.url.split('?')[0] ?? '/';
      if (SERVER_PREFIXES.some((p) => urlPath === p || urlPath.startsWith(`${p}/`))) {
        // Same answers as without this catch-all route: 414 for an over-long parameter, else 404.
        if (urlPath.split('/').some((segment) => segment.length > MAX_PARAM_LENGTH)) {
          throw new AppError('URI_TOO_LONG', 414, 'A path parameter is longer than allowed');
        }
        throw errors.notFound(`Route GET ${urlPath}`);
      }
      const lastSegment = urlPath.slice(urlPath.lastIndexOf('/') + 1);
      // A name with an extension is a file (a missing one is a 404); anything else is a console page.
      if (!lastSegment.includes('.')) return page(request, reply);
      // The router's decoded wildcard: only regular files really inside the console's folder are served.
      const relative = (request.params as { '*': string })['*'];
      const found = await openPreferringCompressed(root, relative, request, reply);
      if (!found) throw errors.notFound(`File ${urlPath}`);
      // Vite puts content-hashed names under assets/: they never change, so browsers keep them.
      const immutable = urlPath.startsWith('/assets/');
      reply.header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
      return sendContainedFile(request, reply, found.file, found.contentType);
    },
  );
}
