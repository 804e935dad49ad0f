import websocket from '@fastify/websocket';
import { createWebSocketStream } from 'ws';
import type { App, AppContext } from '../context.js';
import { AppError } from '../platform/errors.js';
import type { Services } from '../services.js';

/**
 * MQTT over WebSocket at `/mqtt` on the HTTP port (subprotocol `mqtt`). The stream goes to the same
 * broker as TCP; authentication is MQTT's own (connector credentials in CONNECT), so the route is public
 * and not rate-limited per request, like the TCP listener.
 */
export async function brokerRoutes(app: App, _ctx: AppContext, { broker }: Services): Promise<void> {
  // One registration per server, shared with the live WebSocket (live.routes.ts registers it first
  // with its subprotocol choice; that choice picks `mqtt` for MQTT clients too).
  if (!app.hasPlugin('@fastify/websocket')) await app.register(websocket);
  app.route({
    method: 'GET',
    url: '/mqtt',
    config: { auth: 'public', rateLimit: false },
    schema: { hide: true },
    handler: async () => {
      throw new AppError(
        'UPGRADE_REQUIRED',
        426,
        'Connect with an MQTT over WebSocket client (subprotocol mqtt)',
      );
    },
    wsHandler: (socket, request) => broker.accept(createWebSocketStream(socket), 'ws', request.raw),
  });
}
