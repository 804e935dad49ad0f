import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import type { Principal } from '../auth/principal.js';
import { ErrorBody, errorResponses, Uuid } from '../platform/http/schemas.js';
import { MAIL_OAUTH_PROVIDERS } from './mail-oauth.providers.js';

const tags = ['connectors'];
/** Each callback may call the provider's token endpoint: a client gets this many a minute. */
const RATE_LIMIT = { max: 30, timeWindow: 60_000 };

const Text = Type.Optional(Type.String({ maxLength: 4000 }));

/** OAuth 2.0 consent for smtp-mail connectors (docs/outgoing-connectors.md). */
export async function mailOAuthRoutes(app: App, _ctx: AppContext, { mailOAuth }: Services): Promise<void> {
  const principal = (request: { principal: Principal | null }) => request.principal!;

  app.post(
    '/xapi/v1/oauth2/mail/authorize',
    {
      config: { auth: 'principal', permission: 'connector.manage' },
      schema: {
        tags,
        summary:
          'Consent URL for an smtp-mail connector with auth oauth2: open it in a browser to grant sending',
        description:
          '422 OAUTH2_NOT_CONFIGURED for other connectors. The provider redirects to /api/v1/oauth2/<provider>/callback.',
        body: Type.Object({ connectorId: Uuid }, { additionalProperties: false }),
        response: {
          200: Type.Object({ authorizationUrl: Type.String(), redirectUri: Type.String() }),
          ...errorResponses,
        },
      },
    },
    async (request) => mailOAuth.authorize(principal(request), request.body.connectorId),
  );

  app.get(
    '/api/v1/oauth2/:provider/callback',
    {
      config: { auth: 'public', rateLimit: RATE_LIMIT },
      schema: {
        tags,
        summary: 'Redirect target of a mail provider: stores the refresh token of the consent, sealed',
        description:
          '400 OAUTH_PROVIDER_ERROR (the provider sent `error`), 401 OAUTH_STATE_INVALID (unknown, altered or expired), ' +
          '401 OAUTH_PROVIDER_REJECTED (no refresh token), 502 OAUTH_PROVIDER_UNREACHABLE.',
        security: [],
        params: Type.Object({ provider: Type.Union(MAIL_OAUTH_PROVIDERS.map((p) => Type.Literal(p))) }),
        querystring: Type.Object({ code: Text, state: Text, error: Text, error_description: Text }),
        response: {
          200: Type.String({ description: 'A short HTML page' }),
          ...errorResponses,
          502: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      await mailOAuth.callback(request.params.provider, request.query);
      reply.header('cache-control', 'no-store').type('text/html; charset=utf-8');
      return '<!doctype html><meta charset="utf-8"><title>Stellwerk</title><p>Mail access granted. You can close this window.</p>';
    },
  );
}
