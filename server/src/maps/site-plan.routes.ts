import { Type } from 'typebox';
import type { Principal } from '../auth/principal.js';
import type { App, AppContext } from '../context.js';
import { AppError } from '../platform/errors.js';
import { parseListQuery } from '../platform/http/list.js';
import { errorResponses, IdParams, listReply } from '../platform/http/schemas.js';
import { acceptStreamedBody, StreamedBody, streamedBodyParser } from '../platform/http/streamed-body.js';
import type { Services } from '../services.js';
import type { SitePlan } from './site-plan.entity.js';
import { SitePlanCreate, SitePlanListQuery, SitePlanReply, SitePlanUpdate } from './site-plan.schemas.js';
import { SITE_PLAN_SORTABLE } from './site-plan.service.js';

const tags = ['site plans'];
/** What an image upload may be labelled; the bytes decide (SVG is labelled so it gets a clear 415). */
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/svg+xml', 'application/octet-stream'];

export const sitePlanDto = (p: SitePlan) => ({
  id: p.id,
  accountId: p.account.id,
  title: p.title,
  corners: p.corners,
  opacity: p.opacity,
  minZoom: p.minZoom,
  image:
    p.imageType && p.imageBytes !== null && p.imageUpdatedAt
      ? {
          type: p.imageType,
          bytes: p.imageBytes,
          updatedAt: p.imageUpdatedAt.toISOString(),
          url: `/xapi/v1/site-plans/${p.id}/image?v=${p.imageUpdatedAt.getTime()}`,
        }
      : null,
  createdAt: p.createdAt.toISOString(),
  updatedAt: p.updatedAt.toISOString(),
});

/** Site plans: images placed on the twins map (docs/console.md, Site plans). */
export async function sitePlanRoutes(app: App, ctx: AppContext, { sitePlans }: Services): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;
  const base = '/xapi/v1/site-plans';
  const read = { auth: 'principal', permission: 'sitePlan.read', resource: 'sitePlan' } as const;
  const manage = { auth: 'principal', permission: 'sitePlan.manage', resource: 'sitePlan' } as const;

  app.get(
    base,
    {
      config: { auth: 'principal', permission: 'sitePlan.read' },
      schema: {
        tags,
        summary: 'Site plans of an account',
        querystring: SitePlanListQuery,
        response: { 200: listReply(SitePlanReply), ...errorResponses },
      },
    },
    async (request) => {
      const params = parseListQuery(request.query, SITE_PLAN_SORTABLE, 'title');
      const result = await sitePlans.list(principal(request), params, request.query.accountId);
      return { data: result.data.map(sitePlanDto), meta: result.meta };
    },
  );

  app.post(
    base,
    {
      config: { auth: 'principal', permission: 'sitePlan.manage' },
      schema: {
        tags,
        summary: 'Create a site plan (the image is uploaded to its /image)',
        body: SitePlanCreate,
        response: { 201: SitePlanReply, ...errorResponses },
      },
    },
    async (request, reply) =>
      reply.status(201).send(sitePlanDto(await sitePlans.create(principal(request), request.body))),
  );

  app.get(
    `${base}/:id`,
    {
      config: read,
      schema: {
        tags,
        summary: 'A site plan',
        params: IdParams,
        response: { 200: SitePlanReply, ...errorResponses },
      },
    },
    async (request) => sitePlanDto(await sitePlans.get(principal(request), request.params.id)),
  );

  app.patch(
    `${base}/:id`,
    {
      config: manage,
      schema: {
        tags,
        summary: 'Change a site plan’s title, corners, opacity or minimum zoom',
        params: IdParams,
        body: SitePlanUpdate,
        response: { 200: SitePlanReply, ...errorResponses },
      },
    },
    async (request) =>
      sitePlanDto(await sitePlans.update(principal(request), request.params.id, request.body)),
  );

  app.delete(
    `${base}/:id`,
    {
      config: manage,
      schema: {
        tags,
        summary: 'Delete a site plan and its image',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await sitePlans.delete(principal(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    `${base}/:id/image`,
    {
      config: read,
      schema: { tags, summary: 'The site plan’s image', params: IdParams },
    },
    async (request, reply) => {
      const { plan, content } = await sitePlans.image(principal(request), request.params.id);
      // The URL carries the upload time (?v=), so a replaced image gets a new URL.
      return reply
        .header('content-type', plan.imageType!)
        .header('cache-control', 'private, max-age=86400')
        .send(content);
    },
  );

  // Image bodies are accepted here only: collected up to the limit (413 beyond), then checked by their bytes.
  await app.register(async (instance) => {
    const scoped = instance as unknown as App;
    scoped.addContentTypeParser(IMAGE_TYPES, streamedBodyParser(ctx.config.sitePlanMaxBytes));
    scoped.put(
      `${base}/:id/image`,
      {
        config: manage,
        validatorCompiler: acceptStreamedBody,
        schema: {
          tags,
          summary: `Upload the plan’s image: PNG, JPEG or WebP as the body (SVG is refused), or JSON {imageBase64}`,
          params: IdParams,
          body: Type.Union([
            Type.Object(
              { imageBase64: Type.String({ maxLength: 2_000_000 }) },
              { additionalProperties: false },
            ),
            Type.String({ description: 'The image file (Content-Type image/png, image/jpeg or image/webp)' }),
          ]),
          response: { 200: SitePlanReply, ...errorResponses },
        },
      },
      async (request) => {
        const body = request.body as StreamedBody | { imageBase64: string } | string;
        const content =
          body instanceof StreamedBody
            ? Buffer.concat(body.chunks())
            : typeof body === 'object'
              ? Buffer.from(body.imageBase64, 'base64')
              : null;
        if (!content) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 415, 'Send the image as the body');
        return sitePlanDto(await sitePlans.putImage(principal(request), request.params.id, content));
      },
    );
  });
}
