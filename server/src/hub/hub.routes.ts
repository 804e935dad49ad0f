import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import { errorResponses, Uuid } from '../platform/http/schemas.js';

const tags = ['hub'];

/**
 * Legacy IoT hub API under `{hub_url}/api` = `/hub/api`. Every route uses auth mode 'hub':
 * an `x-api-key` holding IotHub.manage, IotHub.read or all.manage (auth/authenticate.ts).
 */
export async function hubRoutes(app: App, _ctx: AppContext, { accounts }: Services): Promise<void> {
  app.get(
    '/hub/api/v1/account',
    {
      config: { auth: 'hub' },
      schema: {
        tags,
        summary: 'The account the API key belongs to',
        security: [{ apiKey: [] }],
        response: { 200: Type.Object({ id: Uuid, title: Type.String() }), ...errorResponses },
      },
    },
    async (request) => {
      const principal = request.principal!;
      const account = await accounts.reachable(principal, principal.accountId);
      return { id: account.id, title: account.title };
    },
  );
}
