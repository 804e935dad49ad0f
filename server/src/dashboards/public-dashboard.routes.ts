import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import { isUuid } from '../platform/crypto/ids.js';
import { AppError, errors } from '../platform/errors.js';
import { clientAddress } from '../platform/http/client-address.js';
import { ErrorBody, errorResponses, IdParams, Timestamp, Uuid } from '../platform/http/schemas.js';
import type { LiveGrant } from '../live/live.grant.js';
import type { OpenedShare } from './dashboard-share.service.js';
import { publicDashboardGrant } from './public-dashboard.live.js';
import { publicHistory, type HistoryRange } from './public-dashboard.history.js';
import { IssuedPublicKey, PublicDashboardReply, PublicKeyStatus } from './public-dashboard.schemas.js';
import { publicDashboard } from './public-dashboard.view.js';

const tags = ['dashboards'];
/** Browsers cannot set headers on a WebSocket: the key may come as this subprotocol. */
export const DASHBOARD_KEY_PROTOCOL = 'dashboardkey.';

/** Where the console shows a published dashboard; the key rides in the fragment, which no request carries. */
export const publicViewUrl = (publicUrl: string, dashboardId: string, key: string) =>
  `${publicUrl.replace(/\/$/, '')}/public/dashboards/${dashboardId}#key=${encodeURIComponent(key)}`;

/**
 * Publishing a dashboard (owner routes under `/xapi/v1/dashboards/:id/public-key`) and the public
 * view's data under the hub API (`/hub/api/v1/public-dashboards/:id`), which lets requests without
 * a login or account API key through for exactly this (spec: "anonymous requests are not blocked
 * for public dashboards"). docs/public-dashboards.md.
 */
export async function publicDashboardRoutes(
  app: App,
  ctx: AppContext,
  { dashboardShares: shares, live, timeseriesQuery }: Services,
): Promise<void> {
  app.get(
    '/xapi/v1/dashboards/:id/public-key',
    {
      config: { auth: 'principal', permission: 'dashboard.read', resource: 'dashboard' },
      schema: {
        tags,
        summary: 'Whether the dashboard is published, and which key is out there (its first characters)',
        params: IdParams,
        response: { 200: PublicKeyStatus, ...errorResponses },
      },
    },
    async (request) => {
      const share = await shares.status(request.principal!, request.params.id);
      return {
        published: share !== null,
        keyPrefix: share?.prefix ?? null,
        issuedAt: share?.issuedAt.toISOString() ?? null,
      };
    },
  );

  app.post(
    '/xapi/v1/dashboards/:id/public-key',
    {
      config: { auth: 'principal', permission: 'dashboard.manage', resource: 'dashboard' },
      schema: {
        tags,
        summary:
          'Publish the dashboard, or rotate its key: a new key (shown once) replaces the old one, whose links stop working',
        params: IdParams,
        response: { 201: IssuedPublicKey, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { share, key } = await shares.publish(request.principal!, request.params.id);
      return reply.status(201).send({
        published: true as const,
        key,
        keyPrefix: share.prefix,
        issuedAt: share.issuedAt.toISOString(),
        url: publicViewUrl(ctx.config.publicUrl, request.params.id, key),
      });
    },
  );

  app.delete(
    '/xapi/v1/dashboards/:id/public-key',
    {
      config: { auth: 'principal', permission: 'dashboard.manage', resource: 'dashboard' },
      schema: {
        tags,
        summary: 'Unpublish: the key stops working at once and open public views close',
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await shares.revoke(request.principal!, request.params.id);
      return reply.status(204).send(null);
    },
  );

  // One key check per request, shared by the rate limiter's key and the handler. Invalid keys count
  // against the address like any invalid credential, so guessing keys is throttled.
  const opened = new WeakMap<FastifyRequest, Promise<OpenedShare>>();
  const open = (request: FastifyRequest): Promise<OpenedShare> => {
    let pending = opened.get(request);
    if (!pending) {
      const address = clientAddress(request.ip);
      const id = (request.params as { id?: string }).id ?? '';
      pending = (async () => {
        ctx.credentialFailures.assertAllowed(address);
        // Checked before the schema's validation (401 before 400, as on every route): a malformed id opens nothing.
        if (!isUuid(id)) throw errors.invalidToken('Invalid or revoked dashboard key');
        try {
          return await shares.open(id, keyOf(request));
        } catch (error) {
          if (error instanceof AppError && error.code === 'INVALID_TOKEN')
            ctx.credentialFailures.record(address);
          throw error;
        }
      })();
      opened.set(request, pending);
    }
    return pending;
  };
  const config = {
    auth: 'dashboardKey' as const,
    resource: 'publicDashboard',
    rateLimit: {
      max: ctx.config.publicDashboardRateLimit,
      timeWindow: 60_000,
      // Per address and dashboard: a control room's wall of screens shares one address per screen.
      keyGenerator: (request: FastifyRequest) =>
        `public-dashboard:${(request.params as { id?: string }).id ?? ''}:${clientAddress(request.ip)}`,
    },
  };
  const security = [{ apiKey: [] }];
  // After the rate limiter (an onRequest hook), before validation: a wrong key is 401 whatever else is wrong.
  const checkKey = async (request: FastifyRequest) => void (await open(request));
  const grants = new WeakMap<FastifyRequest, LiveGrant>();

  app.get(
    '/hub/api/v1/public-dashboards/:id',
    {
      config,
      preValidation: checkKey,
      schema: {
        tags: ['hub'],
        summary: 'A published dashboard without login: its widgets, their twins and states, its maps',
        description: 'The dashboard key goes in `x-api-key` (not an account API key).',
        security,
        params: IdParams,
        response: { 200: PublicDashboardReply, ...errorResponses },
      },
    },
    async (request) => {
      const { dashboard } = await open(request);
      return publicDashboard(ctx.em(), dashboard);
    },
  );

  app.get(
    '/hub/api/v1/public-dashboards/:id/history',
    {
      config,
      preValidation: checkKey,
      schema: {
        tags: ['hub'],
        summary: "A published state's history for the dashboard's line charts (means per bucket from 7 days)",
        security,
        params: IdParams,
        querystring: Type.Object(
          {
            stateId: Uuid,
            range: Type.Optional(
              Type.Union(
                [
                  Type.Literal('1h'),
                  Type.Literal('6h'),
                  Type.Literal('24h'),
                  Type.Literal('7d'),
                  Type.Literal('30d'),
                ] satisfies { const: HistoryRange }[],
                { default: '24h' },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            points: Type.Array(
              Type.Object({ time: Timestamp, value: Type.Union([Type.Number(), Type.Null()]) }),
              { description: 'Oldest first' },
            ),
          }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { dashboard } = await open(request);
      const { stateId, range = '24h' } = request.query;
      return { points: await publicHistory(ctx.em(), timeseriesQuery, dashboard, stateId, range) };
    },
  );

  app.route({
    method: 'GET',
    url: '/hub/api/v1/public-dashboards/:id/live',
    config,
    preValidation: checkKey,
    // The grant is made before the upgrade, so the viewer's first subscribe finds the socket attached.
    preHandler: async (request) => {
      grants.set(request, await publicDashboardGrant(ctx.em, shares, await open(request)));
    },
    schema: {
      tags: ['hub'],
      summary: "A published dashboard's live state changes over WebSocket (docs/live.md)",
      description:
        'The dashboard key as `x-api-key` or as subprotocol `dashboardkey.<key>` next to `stellwerk.live.v1`. ' +
        'Subscribe to the twins the dashboard shows (`{"subscribe":{"twinIds":[…]}}`); only the states its widgets show are pushed.',
      security,
      params: IdParams,
      response: { 426: ErrorBody, ...errorResponses },
    },
    handler: async () => {
      throw new AppError('UPGRADE_REQUIRED', 426, 'Connect with a WebSocket client (Upgrade: websocket)');
    },
    wsHandler: (socket, request) => live.attachGrant(socket, grants.get(request)!),
  });
}

function keyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value) return value;
  return String(request.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .find((p) => p.startsWith(DASHBOARD_KEY_PROTOCOL))
    ?.slice(DASHBOARD_KEY_PROTOCOL.length);
}
