import { Type } from 'typebox';
import type { Principal } from '../auth/principal.js';
import type { App, AppContext } from '../context.js';
import { sendContainedFile } from '../platform/http/file-reply.js';
import { errorResponses, IdParams, Timestamp } from '../platform/http/schemas.js';
import type { Services } from '../services.js';
import type { BasemapInfo } from './basemap.service.js';
import { RawUpload } from './upload-file.js';

const tags = ['accounts'];
const BasemapReply = Type.Object({
  basemap: Type.Union([
    Type.Object({ url: Type.String(), bytes: Type.Integer(), uploadedAt: Timestamp }),
    Type.Null(),
  ]),
});
const basemapDto = (info: BasemapInfo | null) => ({
  basemap: info ? { url: info.url, bytes: info.bytes, uploadedAt: info.uploadedAt.toISOString() } : null,
});
/** What an upload may be sent as; the bytes decide, not the label. */
const ARCHIVE_TYPES = ['application/vnd.pmtiles', 'application/octet-stream'];

/** Basemap archives uploaded per account (docs/console.md, A site's own basemap). */
export async function basemapRoutes(app: App, _ctx: AppContext, { basemaps }: Services): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;
  const base = '/xapi/v1/accounts/:id/basemap';

  app.get(
    base,
    {
      config: { auth: 'principal', permission: 'account.read', resource: 'account' },
      schema: {
        tags,
        summary: 'The account’s uploaded basemap archive, if its basemap is one',
        params: IdParams,
        response: { 200: BasemapReply, ...errorResponses },
      },
    },
    async (request) => basemapDto(await basemaps.info(principal(request), request.params.id)),
  );

  app.delete(
    base,
    {
      config: { auth: 'principal', permission: 'account.manage', resource: 'account' },
      schema: {
        tags,
        summary: 'Remove the uploaded basemap; the map falls back to the inherited or offline basemap',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await basemaps.remove(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/xapi/v1/basemaps/:file',
    {
      // Signed-in callers of the owning account, above or below it; the map's fetches carry the cookie.
      config: { auth: 'principal' },
      schema: {
        tags,
        summary: 'An uploaded basemap archive (byte ranges answered with 206)',
        params: Type.Object({ file: Type.String({ maxLength: 100 }) }),
      },
    },
    async (request, reply) => {
      const file = await basemaps.open(principal(request), request.params.file);
      // Each upload has its own URL, so the archive never changes under it.
      reply.header('cache-control', 'private, max-age=86400, immutable');
      return sendContainedFile(request, reply, file, 'application/vnd.pmtiles');
    },
  );

  // The raw archive is accepted here only, and handed over unread: it is streamed to disk.
  await app.register(async (instance) => {
    const scoped = instance as unknown as App;
    scoped.addContentTypeParser(ARCHIVE_TYPES, (_request, payload, done) =>
      done(null, new RawUpload(payload)),
    );
    scoped.put(
      base,
      {
        config: { auth: 'principal', permission: 'account.manage', resource: 'account' },
        schema: {
          tags,
          summary:
            'Upload a PMTiles v3 archive (body: the file, Content-Type application/vnd.pmtiles) as the account’s basemap',
          params: IdParams,
          response: { 200: BasemapReply, ...errorResponses },
        },
      },
      async (request) => {
        const length = Number(request.headers['content-length']);
        const info = await basemaps.upload(
          principal(request),
          request.params.id,
          request.body,
          Number.isFinite(length) ? length : undefined,
        );
        return basemapDto(info);
      },
    );
  });
}
