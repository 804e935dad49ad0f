import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import { errorResponses } from '../platform/http/schemas.js';
import {
  ConsoleLoginReply,
  CurrentUser,
  LOGIN_ERRORS_TEXT,
  LoginBody,
  SessionReply,
  userSummary,
} from './auth.schemas.js';
import { presentedCredential } from './credential.js';
import {
  clearSessionCookie,
  presentedSessionToken,
  setSessionCookie,
  type ConsoleCookiePolicy,
} from './session-cookie.js';

const tags = ['console session'];
const CSRF_NOTE = 'Send `X-Requested-With` (any value) or a same-origin `Origin` header (CSRF check).';

/** The console's cookie session under `/api/v1` (spec: frontend sessions use secure cookies). */
export async function consoleSessionRoutes(
  app: App,
  ctx: AppContext,
  { auth, accounts }: Services,
  cookie: ConsoleCookiePolicy,
): Promise<void> {
  app.post(
    '/api/v1/auth/login',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'Console login: sets the HttpOnly session cookie (a new session id every login)',
        description: `${LOGIN_ERRORS_TEXT} ${CSRF_NOTE}`,
        security: [],
        body: LoginBody,
        response: { 200: ConsoleLoginReply, ...errorResponses },
      },
    },
    async (request, reply) => {
      const result = await auth.consoleLogin(request.body, presentedSessionToken(request), {
        ip: request.ip,
        userAgent: request.headers['user-agent'],
      });
      setSessionCookie(reply, cookie(request), result.token, ctx.config.sessionTtlSeconds);
      reply.header('cache-control', 'no-store');
      return {
        expiresAt: result.session.expiresAt.toISOString(),
        user: userSummary(result.user, result.permissions),
      };
    },
  );

  app.post(
    '/api/v1/auth/logout',
    {
      // Public: logging out with an expired or unknown cookie still clears it.
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'Console logout: revokes the session and clears the cookie',
        description: CSRF_NOTE,
        security: [],
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      const token = presentedSessionToken(request);
      if (token) await auth.logout(token);
      clearSessionCookie(reply, cookie(request));
      return reply.status(204).send(null);
    },
  );

  const currentUser = async (userId: string) => {
    const { user, permissions } = await auth.currentUser(userId);
    return {
      ...userSummary(user, permissions),
      accountTitle: user.account.title,
      mandatoryTwoFactor: user.account.mandatoryTwoFactor,
      accountTimeZone: user.account.timeZone,
      uiSettings: await accounts.effectiveUiSettings(user.account),
    };
  };

  app.get(
    '/api/v1/user',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'The signed-in user (cookie session or bearer token)',
        response: { 200: CurrentUser, ...errorResponses },
      },
    },
    async (request) => currentUser(request.principal!.userId!),
  );

  app.get(
    '/api/v1/session',
    {
      config: { auth: 'optionalUser' },
      schema: {
        tags,
        summary:
          'Whether a user is signed in, and who: 200 either way (the console asks this on every visit)',
        description:
          'Without a session, or with an expired or revoked one, `{authenticated: false}` (a stale cookie is cleared); with one, `{authenticated: true, user}` as `GET /api/v1/user` answers it. Errors other than a missing or invalid session are those of `GET /api/v1/user` (403 `TWO_FACTOR_SETUP_REQUIRED`, `USER_REQUIRED` for an API key).',
        response: { 200: SessionReply, ...errorResponses },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const userId = request.principal?.userId;
      if (userId) return { authenticated: true, user: await currentUser(userId) };
      if (presentedCredential(request, 'optionalUser')?.kind === 'cookie')
        clearSessionCookie(reply, cookie(request));
      return { authenticated: false };
    },
  );
}
