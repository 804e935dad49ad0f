import { Type } from 'typebox';
import type { App, AppContext } from '../context.js';
import type { Services } from '../services.js';
import { errorResponses } from '../platform/http/schemas.js';
import { ActivateBody, ActivateReply, DeactivateBody, EnrolmentReply } from './auth.schemas.js';
import { setSessionCookie, type ConsoleCookiePolicy } from './session-cookie.js';

const tags = ['two-factor'];

/**
 * TOTP enrolment for the signed-in user, under the XAPI and mirrored for the console.
 * Enrolment and activation also accept the setup token of a mandatory-2FA login ('enrolment').
 */
export async function twoFactorRoutes(
  app: App,
  ctx: AppContext,
  { auth, twoFactor }: Services,
  cookie: ConsoleCookiePolicy,
): Promise<void> {
  for (const base of ['/xapi/v1/users/me/2fa', '/api/v1/user/2fa']) {
    app.post(
      base,
      {
        config: { auth: 'enrolment' },
        schema: {
          tags,
          summary:
            'Start 2FA enrolment: a new TOTP secret, its otpauth URL and QR code (not active until activated)',
          description:
            'Accepts the setupToken of a TWO_FACTOR_SETUP_REQUIRED login as bearer token. 409 TWO_FACTOR_ALREADY_ENABLED.',
          response: { 200: EnrolmentReply, ...errorResponses },
        },
      },
      async (request) => twoFactor.enrol(request.principal!.userId!),
    );

    app.post(
      `${base}/activate`,
      {
        config: { auth: 'enrolment' },
        schema: {
          tags,
          summary: 'Activate 2FA with a current code; returns 10 one-time recovery codes, shown once',
          description:
            '422 INVALID_TWO_FACTOR_CODE for a wrong code; 429 LOGIN_THROTTLED after too many (they count ' +
            'against the account like failed logins). A setup token is spent by activation; a console ' +
            'session is replaced by a new one (new cookie).',
          body: ActivateBody,
          response: { 200: ActivateReply, ...errorResponses },
        },
      },
      async (request, reply) => {
        const principal = request.principal!;
        const result = await auth.activateTwoFactor(
          principal.userId!,
          principal.sessionId,
          request.body.otp,
          {
            ip: request.ip,
            userAgent: request.headers['user-agent'],
          },
        );
        if (result.newCookieSession) {
          setSessionCookie(
            reply,
            cookie(request),
            result.newCookieSession.token,
            ctx.config.sessionTtlSeconds,
          );
        }
        reply.header('cache-control', 'no-store');
        return { recoveryCodes: result.recoveryCodes };
      },
    );

    app.delete(
      base,
      {
        config: { auth: 'user' },
        schema: {
          tags,
          summary: 'Deactivate 2FA; needs a current code (otp) or an unused recovery code',
          description:
            '422 INVALID_TWO_FACTOR_CODE for a wrong or used code; 409 TWO_FACTOR_NOT_ENABLED; 429 LOGIN_THROTTLED ' +
            'after too many wrong codes (they count against the account like failed logins).',
          body: DeactivateBody,
          response: { 204: Type.Null(), ...errorResponses },
        },
      },
      async (request, reply) => {
        await auth.deactivateTwoFactor(request.principal!.userId!, request.body, {
          ip: request.ip,
          userAgent: request.headers['user-agent'],
        });
        return reply.status(204).send(null);
      },
    );
  }
}
