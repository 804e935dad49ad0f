import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import { errorResponses, Uuid } from '../platform/http/schemas.js';

const tags = ['setup'];

/** The console's onboarding page: creates the first admin with the token printed at start. */
export async function setupRoutes(app: App, _ctx: AppContext, { bootstrap }: Services): Promise<void> {
  app.get(
    '/api/v1/onboarding',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'Whether the instance still waits for its first admin',
        response: { 200: Type.Object({ required: Type.Boolean() }) },
      },
    },
    async () => ({ required: await bootstrap.onboardingOpen() }),
  );

  app.post(
    '/api/v1/onboarding',
    {
      config: { auth: 'public', rateLimit: { max: 10, timeWindow: 60_000 } },
      schema: {
        tags,
        summary: 'Create the first admin with the one-time setup token',
        body: Type.Object(
          {
            setupToken: Type.String({ minLength: 1, maxLength: 200 }),
            email: Type.String({ format: 'email', maxLength: 320 }),
            password: Type.String({ minLength: 12, maxLength: 1024 }),
            name: Type.Optional(Type.String({ maxLength: 200 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Object({ id: Uuid, email: Type.String() }), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { setupToken, ...input } = request.body;
      const user = await bootstrap.onboard(setupToken, input);
      return reply.status(201).send({ id: user.id, email: user.email });
    },
  );
}
