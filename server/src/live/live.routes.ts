import websocket from '@fastify/websocket';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { SESSION_COOKIE_PLAIN, SESSION_COOKIE_SECURE } from '../auth/authenticate.js';
import { hasPermission } from '../auth/principal.js';
import type { App, AppContext } from '../context.js';
import { AppError, errors } from '../platform/errors.js';
import { ErrorBody, errorResponses } from '../platform/http/schemas.js';
import type { Services } from '../services.js';
import { LIVE_ALARMS_PERMISSION, LIVE_PERMISSIONS } from './live.hub.js';

export const LIVE_PROTOCOL = 'stellwerk.live.v1';
const BEARER_PROTOCOL = 'bearer.';
const API_KEY_PROTOCOL = 'apikey.';
/** A public dashboard's key (dashboards/public-dashboard.routes.ts): a credential too, never echoed. */
const CREDENTIAL_PROTOCOLS = [BEARER_PROTOCOL, API_KEY_PROTOCOL, 'dashboardkey.'];

/**
 * `GET /xapi/v1/live`: the live WebSocket (docs/live.md). Browsers cannot set headers on a
 * WebSocket, so besides `Authorization`, `x-api-key` and the console cookie the credential may come
 * as a subprotocol (`bearer.<token>` or `apikey.<key>`, next to `stellwerk.live.v1`) or as
 * `?token=<token>`; `liftCredential` turns those into headers before the ordinary auth hook runs.
 */
export async function liveRoutes(app: App, ctx: AppContext, { live }: Services): Promise<void> {
  // One registration per server; the broker's MQTT-over-WebSocket route shares it.
  if (!app.hasPlugin('@fastify/websocket')) {
    await app.register(websocket, {
      options: { maxPayload: 1024 * 1024, handleProtocols: chooseProtocol },
    });
  }
  const allowedOrigin = new URL(ctx.config.publicUrl).origin;
  app.route({
    method: 'GET',
    url: '/xapi/v1/live',
    // No single route permission: any topic's permission opens the socket; each subscribe checks its own.
    config: { auth: 'principal' },
    onRequest: async (request) => liftCredential(request, allowedOrigin),
    preHandler: async (request) => {
      const needed = [...Object.values(LIVE_PERMISSIONS), LIVE_ALARMS_PERMISSION];
      if (!needed.some((p) => hasPermission(request.principal!, p))) throw errors.noPermission(needed[0]!);
    },
    schema: {
      tags: ['live'],
      summary: 'Live device packets, twin state changes and alarm changes over WebSocket',
      description:
        'Needs VirtualDevice.read (devices), state.read (twins) or alarmLog.read (alarms). Upgrade to a WebSocket, then send ' +
        '`{"subscribe":{"deviceIds":[…],"twinIds":[…],"alarms":true}}`; packets of visible devices arrive as ' +
        '`{"type":"packets","packets":[{"deviceId","receivedAt","states"}]}`, state changes of visible twins as ' +
        '`{"type":"states","states":[{"twinId","stateId","key","value","timestamp","warning"?}]}`, changes of ' +
        'alarm entries the caller may read as `{"type":"alarms","alarms":[{"id","status","severity","occurrenceCount","lastSeenAt",…}]}`. ' +
        'Credential: `Authorization: Bearer`, `x-api-key`, ' +
        'the console cookie, subprotocol `bearer.<token>` / `apikey.<key>` (offer `stellwerk.live.v1` too) or `?token=`. ' +
        'A plain GET answers 426 UPGRADE_REQUIRED.',
      querystring: Type.Object({
        token: Type.Optional(Type.String({ maxLength: 512, description: 'Session token (browsers)' })),
      }),
      response: { 426: ErrorBody, ...errorResponses },
    },
    handler: async () => {
      throw new AppError('UPGRADE_REQUIRED', 426, 'Connect with a WebSocket client (Upgrade: websocket)');
    },
    wsHandler: (socket, request) => live.attach(socket, request.principal!),
  });
}

function liftCredential(request: FastifyRequest, allowedOrigin: string): void {
  const headers = request.headers;
  if (headers.authorization || headers['x-api-key']) return;
  const offered = String(headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim());
  const bearer = offered.find((p) => p.startsWith(BEARER_PROTOCOL))?.slice(BEARER_PROTOCOL.length);
  const apiKey = offered.find((p) => p.startsWith(API_KEY_PROTOCOL))?.slice(API_KEY_PROTOCOL.length);
  const queryToken = (request.query as { token?: unknown } | undefined)?.token;
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  else if (apiKey) headers['x-api-key'] = apiKey;
  else if (typeof queryToken === 'string' && queryToken) headers.authorization = `Bearer ${queryToken}`;
  else if (request.cookies?.[SESSION_COOKIE_SECURE] ?? request.cookies?.[SESSION_COOKIE_PLAIN]) {
    // The cookie rides along on cross-site WebSocket handshakes too (no CORS here): check the page's
    // origin. Allowed: the public URL's, or the host this request came to (the console was served by
    // this server under that name, e.g. its IP address on the site network).
    const origin = headers.origin;
    if (origin !== undefined && origin !== allowedOrigin && originHost(origin) !== headers.host)
      throw errors.forbidden('ORIGIN_NOT_ALLOWED', `WebSocket from origin ${origin} is not allowed`);
  }
}

function originHost(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}

/** Answers with our protocol when offered; never echoes a credential-carrying one. */
function chooseProtocol(protocols: Set<string>): string | false {
  if (protocols.has(LIVE_PROTOCOL)) return LIVE_PROTOCOL;
  for (const p of protocols) if (!CREDENTIAL_PROTOCOLS.some((prefix) => p.startsWith(prefix))) return p;
  return false;
}
