import type { FastifyRequest } from 'fastify';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import { clientAddress } from '../platform/http/client-address.js';
import { errorResponses } from '../platform/http/schemas.js';
import type { Connector } from './connector.entity.js';
import { WebhookBody, WebhookParams, WebhookPathParams, WebhookReply } from './connector.schemas.js';

/**
 * Kinds whose webhooks the per-connector rate limit does not apply to (spec, Limits: not applied to
 * the LoRaWAN network-server connectors of one vendor kind). One The Things Stack application
 * webhook carries every device's messages, and The Things Stack disables a webhook that fails
 * successively, so a 429 would cut off a whole application (docs/adr/0108-tts-webhooks-not-rate-limited.md).
 * The failed-lookup budget per address still guards the token.
 */
export const RATE_LIMIT_EXEMPT_KINDS: ReadonlySet<string> = new Set(['tts-uplink']);

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

  // The token in the URL is the credential (docs/adr/0070-incoming-webhooks.md).
  const config = {
    auth: 'public' as const,
    rateLimit: {
      max: ctx.config.webhookRateLimit,
      timeWindow: 60_000,
      // Per connector, not per token string: an unknown token buys no budget of its own, it
      // shares its address's (so guessing tokens costs one lookup each, within that budget).
      keyGenerator: async (request: FastifyRequest) => {
        const connector = await connectorOf(request).catch(() => null);
        return connector ? `webhook:${connector.id}` : `ip:${clientAddress(request.ip)}`;
      },
      // Runs after the key, so an exempt connector was still looked up within the failure budget.
      allowList: async (request: FastifyRequest) => {
        const connector = await connectorOf(request).catch(() => null);
        return connector !== null && RATE_LIMIT_EXEMPT_KINDS.has(connector.type);
      },
    },
  };
  const response = { 202: WebhookReply, ...errorResponses, 503: errorResponses[409] };

  app.post(
    '/xapi/v1/webhooks/:token',
    {
      config,
      schema: {
        tags: ['webhooks'],
        summary: 'Incoming webhook: packets for the connector the token names (202 once stored)',
        security: [],
        params: WebhookParams,
        body: WebhookBody,
        response,
      },
    },
    async (request, reply) => {
      const result = await webhooks.receive(await connectorOf(request), request.body, {
        path: '',
        query: queryOf(request),
      });
      return reply.status(202).send(result);
    },
  );

  // Network servers post each message type to the base URL plus a path of its own (The Things
  // Stack: `/uplink`, `/join`, `/downlink/ack`, …); the kind reads the type from it.
  app.post(
    '/xapi/v1/webhooks/:token/*',
    {
      config,
      schema: {
        tags: ['webhooks'],
        summary: 'Incoming webhook with a message path (network servers): as the base URL, plus the path',
        security: [],
        params: WebhookPathParams,
        body: WebhookBody,
        response,
      },
    },
    async (request, reply) => {
      const path = (request.params as { '*'?: string })['*'] ?? '';
      const result = await webhooks.receive(await connectorOf(request), request.body, {
        path: path.replace(/^\/+|\/+$/g, ''),
        query: queryOf(request),
      });
      return reply.status(202).send(result);
    },
  );
}

/** The query as single strings (a repeated key keeps its first value). */
function queryOf(request: FastifyRequest): Record<string, string> {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    const first = Array.isArray(value) ? (value[0] as unknown) : value;
    if (typeof first === 'string') out[key] = first;
  }
  return out;
}
