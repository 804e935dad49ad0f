import type { App, AppContext } from '../context.js';
import { errorResponses } from '../platform/http/schemas.js';
import type { Services } from '../services.js';
import { HealthReply } from './health.schemas.js';

/** The health-check interface for monitoring systems; `GET /health` (app.ts) is the instant liveness probe. */
export async function healthRoutes(app: App, _ctx: AppContext, { health }: Services): Promise<void> {
  app.get(
    '/xapi/v1/health',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['health'],
        summary: 'Stored state of all server nodes and of the database',
        description:
          "Reads every node's last heartbeat from PostgreSQL in one query; nodes are never contacted live. 503 when the database query fails.",
        security: [],
        response: { 200: HealthReply, 503: HealthReply, ...errorResponses },
      },
    },
    async (_request, reply) => {
      const report = await health.check();
      return reply.status(report.database.status === 'ok' ? 200 : 503).send(report);
    },
  );
}
