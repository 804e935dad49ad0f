import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import { errorResponses } from '../platform/http/schemas.js';
import { InvitationAccept, InvitationAccepted, InvitationFound, InvitationLookup } from './user.schemas.js';

/**
 * The console's invitation page: it names the invited address from the link's token, then posts
 * the token and the chosen password. The token goes in the body, not the URL, to stay out of logs.
 */
export async function invitationRoutes(app: App, _ctx: AppContext, { invitations }: Services): Promise<void> {
  app.post(
    '/api/v1/invitations/lookup',
    {
      // As guessable as accepting: the same tight per-client limit.
      config: { auth: 'public', rateLimit: { max: 10, timeWindow: 60_000 } },
      schema: {
        tags: ['users'],
        summary: 'Name the e-mail address an open invitation link is for',
        security: [],
        body: InvitationLookup,
        response: { 200: InvitationFound, ...errorResponses },
      },
    },
    async (request) => ({ email: await invitations.invitedEmail(request.body.token) }),
  );

  app.post(
    '/api/v1/invitations/accept',
    {
      // Public and guessable only by brute force: a tight per-client limit makes that hopeless.
      config: { auth: 'public', rateLimit: { max: 10, timeWindow: 60_000 } },
      schema: {
        tags: ['users'],
        summary: 'Set the password of an invited user with the one-time link token',
        security: [],
        body: InvitationAccept,
        response: { 200: InvitationAccepted, ...errorResponses },
      },
    },
    async (request) => {
      const user = await invitations.accept(request.body.token, request.body.password);
      return { id: user.id, email: user.email };
    },
  );
}
