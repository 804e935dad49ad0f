import { Type } from 'typebox';
import type { App, AppContext } from '../../context.js';
import type { Services } from '../../services.js';
import { ErrorBody, errorResponses, Timestamp, Uuid } from '../../platform/http/schemas.js';
import { DeactivateBody, UserSummary, userSummary } from '../auth.schemas.js';
import { presentedSessionToken, sessionCookiePolicy, setSessionCookie } from '../session-cookie.js';
import {
  clearBindingCookie,
  clearSecondFactorCookie,
  presentedBinding,
  presentedSecondFactor,
  setBindingCookie,
  setSecondFactorCookie,
} from './binding-cookie.js';

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

/** The console's page where a federated login waiting for the user's Stellwerk code is finished. */
export const SECOND_FACTOR_PAGE = '/#/login?step=federated-code';

const SecondFactorReply = Type.Object({
  returnTo: Type.String({ description: 'The path the login was started for' }),
  expiresAt: Timestamp,
  user: UserSummary,
});

const CALLBACK_ERRORS =
  'Errors answer with the error body: 400 OAUTH_PROVIDER_ERROR (the provider sent `error`), 401 OAUTH_STATE_INVALID ' +
  '(unknown, used, expired or started in another browser), 401 OAUTH_PROVIDER_REJECTED / OAUTH_RESPONSE_INVALID, ' +
  '403 FEDERATED_LOGIN_NOT_ALLOWED (the user holds more than the configuration may grant), 403 ' +
  'FEDERATED_TWO_FACTOR_SETUP_REQUIRED, 409 FEDERATED_LOGIN_REFUSED (the e-mail or identity cannot be used in this ' +
  'account), 409 FEDERATED_EMAIL_UNVERIFIED, 422 FEDERATED_EMAIL_MISSING, 422 OAUTH_CONFIG_UNCONFIRMED, 502 ' +
  `OAUTH_PROVIDER_UNREACHABLE. A user with two-factor authentication is sent to ${SECOND_FACTOR_PAGE} to enter ` +
  'the code unless the account trusts the provider’s MFA and the provider reported it.';

/** Federated login (spec: Authentication 4); see docs/federated-login.md. */
export async function oidcRoutes(
  app: App,
  ctx: AppContext,
  { oidc, federatedCompletion, auth }: Services,
): Promise<void> {
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
      const result = await oidc.callback({
        query: request.query,
        binding: presentedBinding(request, cookie),
        previousSessionToken: presentedSessionToken(request),
        client: { ip: request.ip, userAgent: request.headers['user-agent'] },
      });
      clearBindingCookie(reply, cookie);
      reply.header('cache-control', 'no-store');
      if ('secondFactorToken' in result) {
        setSecondFactorCookie(reply, cookie, result.secondFactorToken);
        return reply.redirect(SECOND_FACTOR_PAGE, 302);
      }
      setSessionCookie(reply, cookie, result.signedIn.token, ctx.config.sessionTtlSeconds);
      return reply.redirect(result.signedIn.returnTo, 302);
    },
  );

  app.post(
    '/api/v1/oauth2/second-factor',
    {
      config: { auth: 'public', rateLimit: OAUTH_RATE_LIMIT },
      schema: {
        tags,
        summary: 'Finish a federated login that waits for the user’s Stellwerk code: sets the session cookie',
        description:
          'Needs the cookie the callback set. 401 INVALID_TWO_FACTOR_CODE (wrong or used code), 401 ' +
          'OAUTH_STATE_INVALID (no login waiting in this browser, or older than 5 minutes), 429 LOGIN_THROTTLED. ' +
          'Send `X-Requested-With` (CSRF check).',
        security: [],
        body: DeactivateBody,
        response: { 200: SecondFactorReply, ...errorResponses },
      },
    },
    async (request, reply) => {
      const login = await federatedCompletion.completeSecondFactor(
        presentedSecondFactor(request, cookie),
        request.body,
        {
          previousSessionToken: presentedSessionToken(request),
          client: { ip: request.ip, userAgent: request.headers['user-agent'] },
        },
      );
      setSessionCookie(reply, cookie, login.token, ctx.config.sessionTtlSeconds);
      clearSecondFactorCookie(reply, cookie);
      reply.header('cache-control', 'no-store');
      return {
        returnTo: login.returnTo,
        expiresAt: login.session.expiresAt.toISOString(),
        user: userSummary(login.user, await auth.permissionsOf(login.user)),
      };
    },
  );
}
