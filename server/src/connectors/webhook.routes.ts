import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import { errorResponses } from '../platform/http/schemas.js';
import { sha256 } from '../platform/crypto/tokens.js';
import { WebhookBody, WebhookParams, WebhookReply } from './connector.schemas.js';

/** Requests per minute and webhook URL; a TTS application posts all its devices' uplinks to one URL. */
const WEBHOOK_RATE_PER_MINUTE = 6000;

export async function webhookRoutes(app: App, _ctx: AppContext, { webhooks }: Services): Promise<void> {
  app.post(
    '/xapi/v1/webhooks/:token',
    {
      // The token in the URL is the credential (docs/adr/0070-incoming-webhooks.md).
      config: {
        auth: 'public',
        rateLimit: {
          max: WEBHOOK_RATE_PER_MINUTE,
          timeWindow: 60_000,
          keyGenerator: (request: { params: unknown; ip: string }) => {
            const token = (request.params as { token?: string } | undefined)?.token;
            return token ? `webhook:${sha256(token)}` : `ip:${request.ip}`;
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
      const result = await webhooks.receive(request.params.token, request.body);
      return reply.status(202).send(result);
    },
  );
}
