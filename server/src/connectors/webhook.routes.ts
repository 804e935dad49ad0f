import type { FastifyRequest } from 'fastify';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import { clientAddress } from '../platform/http/client-address.js';
import { errorResponses } from '../platform/http/schemas.js';
import type { Connector } from './connector.entity.js';
import { WebhookBody, WebhookParams, WebhookReply } from './connector.schemas.js';

/** Requests per minute and webhook URL; a TTS application posts all its devices' uplinks to one URL. */
const WEBHOOK_RATE_PER_MINUTE = 6000;

export async function webhookRoutes(
  app: App,
  ctx: AppContext,
  { webhooks, connectors }: Services,
): Promise<void> {
  const failures = ctx.credentialFailures;
  /**
   * The connector a request's URL token names, looked up once per request for the rate limiter and
   * the handler. The token is a credential: an unknown one counts against the client address like an
   * invalid API key, and an address over that budget is refused before its lookup.
   */
  const lookups = new WeakMap<FastifyRequest, Promise<Connector | null>>();
  const connectorOf = (request: FastifyRequest): Promise<Connector | null> => {
    let lookup = lookups.get(request);
    if (!lookup) {
      const address = clientAddress(request.ip);
      const token = (request.params as { token?: string } | undefined)?.token ?? '';
      lookup = (async () => {
        failures.assertAllowed(address);
        const connector = await connectors.findByWebhookToken(token);
        if (!connector) failures.record(address);
        return connector;
      })();
      lookups.set(request, lookup);
    }
    return lookup;
  };

  app.post(
    '/xapi/v1/webhooks/:token',
    {
      // The token in the URL is the credential (docs/adr/0070-incoming-webhooks.md).
      config: {
        auth: 'public',
        rateLimit: {
          max: WEBHOOK_RATE_PER_MINUTE,
          timeWindow: 60_000,
          // Per connector, not per token string: an unknown token buys no budget of its own, it
          // shares its address's (so guessing tokens costs one lookup each, within that budget).
          keyGenerator: async (request: FastifyRequest) => {
            const connector = await connectorOf(request).catch(() => null);
            return connector ? `webhook:${connector.id}` : `ip:${clientAddress(request.ip)}`;
          },
        },
      },
      schema: {
        tags: ['webhooks'],
        summary: 'Incoming webhook: packets for the connector the token names (202 once stored)',
        security: [],
        params: WebhookParams,
        body: WebhookBody,
        response: { 202: WebhookReply, ...errorResponses, 503: errorResponses[409] },
      },
    },
    async (request, reply) => {
      const result = await webhooks.receive(await connectorOf(request), request.body);
      return reply.status(202).send(result);
    },
  );
}
