import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import { errorResponses } from '../platform/http/schemas.js';
import { LOGIN_ERRORS_TEXT, LoginBody, LoginReply, userSummary } from './auth.schemas.js';
import { consoleSessionRoutes } from './console-session.routes.js';
import { consoleCookiePolicy } from './session-cookie.js';
import { twoFactorRoutes } from './two-factor.routes.js';

const tags = ['auth'];

/** Password login and logout for the XAPI (bearer tokens), plus the console session and 2FA routes. */
export async function authRoutes(app: App, ctx: AppContext, services: Services): Promise<void> {
  const { auth } = services;

  app.post(
    '/xapi/v1/auth/login',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'Log in with e-mail and password (and a 2FA code when enabled); returns a bearer token',
        description: LOGIN_ERRORS_TEXT,
        security: [],
        body: LoginBody,
        response: { 200: LoginReply, ...errorResponses },
      },
    },
    async (request, reply) => {
      const result = await auth.login(request.body, 'bearer', {
        ip: request.ip,
        userAgent: request.headers['user-agent'],
      });
      reply.header('cache-control', 'no-store');
      return {
        token: result.token,
        expiresAt: result.session.expiresAt.toISOString(),
        user: userSummary(result.user, result.permissions),
      };
    },
  );

  app.post(
    '/xapi/v1/auth/logout',
    {
      // 'enrolment' so that a setup token can be revoked too.
      config: { auth: 'enrolment' },
      schema: {
        tags,
        summary: 'Revoke the bearer token of this request; later use answers 401 INVALID_TOKEN',
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await auth.logoutSession(request.principal!.sessionId!);
      return reply.status(204).send(null);
    },
  );

  const cookiePolicy = consoleCookiePolicy(ctx.config.publicUrl, ctx.log);
  await consoleSessionRoutes(app, ctx, services, cookiePolicy);
  await twoFactorRoutes(app, ctx, services, cookiePolicy);
}
