import { Type } from 'typebox';
import type { App, AppContext } from '../../context.js';
import type { Services } from '../../services.js';
import { ErrorBody, errorResponses, Uuid } from '../../platform/http/schemas.js';
import { presentedSessionToken, sessionCookiePolicy, setSessionCookie } from '../session-cookie.js';
import { clearBindingCookie, presentedBinding, setBindingCookie } from './binding-cookie.js';

const tags = ['federated login'];

/** Each call writes a login state: a client may start or finish this many logins a minute. */
const OAUTH_RATE_LIMIT = { max: 30, timeWindow: 60_000 };

const AuthorizeQuery = Type.Object({
  accountId: Uuid,
  returnTo: Type.Optional(
    Type.String({ maxLength: 2000, description: 'Path on this site to land on after login (default `/`).' }),
  ),
});

const Text = Type.Optional(Type.String({ maxLength: 4000 }));
// Providers add parameters of their own (session_state, scope, authuser …): those are ignored.
const CallbackQuery = Type.Object({
  code: Text,
  state: Text,
  iss: Text,
  error: Text,
  error_description: Text,
});

const Redirect = Type.Null({ description: 'Redirect (Location header).' });

const CALLBACK_ERRORS =
  'Errors answer with the error body: 400 OAUTH_PROVIDER_ERROR (the provider sent `error`), 401 OAUTH_STATE_INVALID ' +
  '(unknown, used, expired or started in another browser), 401 OAUTH_PROVIDER_REJECTED / OAUTH_RESPONSE_INVALID, ' +
  '409 FEDERATED_EMAIL_CONFLICT (the e-mail belongs to a user of another account), 409 FEDERATED_EMAIL_UNVERIFIED, ' +
  '409 FEDERATED_IDENTITY_CONFLICT, 422 FEDERATED_EMAIL_MISSING, 502 OAUTH_PROVIDER_UNREACHABLE.';

/** Federated login (spec: Authentication 4); see docs/federated-login.md. */
export async function oidcRoutes(app: App, ctx: AppContext, { oidc }: Services): Promise<void> {
  const cookie = sessionCookiePolicy(ctx.config.publicUrl);

  app.get(
    '/api/v1/oauth2/authorize',
    {
      config: { auth: 'public', rateLimit: OAUTH_RATE_LIMIT },
      schema: {
        tags,
        summary: "Start a federated login with the account's OAuth 2.0 / OIDC provider (302 to the provider)",
        description:
          '404 NOT_FOUND when the account has no OAuth configuration; 400 VALIDATION_ERROR for a returnTo that is ' +
          'not a path on this site; 422 OAUTH_INSECURE_ENDPOINT for a plain-http provider outside localhost.',
        security: [],
        querystring: AuthorizeQuery,
        response: { 302: Redirect, ...errorResponses },
      },
    },
    async (request, reply) => {
      const started = await oidc.start({
        accountId: request.query.accountId,
        returnTo: request.query.returnTo,
        binding: presentedBinding(request, cookie),
      });
      setBindingCookie(reply, cookie, started.binding);
      reply.header('cache-control', 'no-store');
      return reply.redirect(started.redirectUrl, 302);
    },
  );

  app.get(
    '/api/v1/oauth2/callback',
    {
      config: { auth: 'public', rateLimit: OAUTH_RATE_LIMIT },
      schema: {
        tags,
        summary:
          'Redirect target of the provider: finishes the login, sets the session cookie, 302 to returnTo',
        description: CALLBACK_ERRORS,
        security: [],
        querystring: CallbackQuery,
        response: { 302: Redirect, ...errorResponses, 502: ErrorBody },
      },
    },
    async (request, reply) => {
      const login = await oidc.callback({
        query: request.query,
        binding: presentedBinding(request, cookie),
        previousSessionToken: presentedSessionToken(request),
        client: { ip: request.ip, userAgent: request.headers['user-agent'] },
      });
      setSessionCookie(reply, cookie, login.token, ctx.config.sessionTtlSeconds);
      clearBindingCookie(reply, cookie);
      reply.header('cache-control', 'no-store');
      return reply.redirect(login.returnTo, 302);
    },
  );
}
