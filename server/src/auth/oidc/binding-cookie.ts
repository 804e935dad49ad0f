import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SessionCookiePolicy } from '../session-cookie.js';
import { SECOND_FACTOR_TTL_SECONDS } from './federated-completion.service.js';
import { LOGIN_STATE_TTL_SECONDS } from './login-state.service.js';

/**
 * The cookie that ties a federated login to the browser that started it, so that a callback
 * URL handed to someone else (login CSRF) is refused. It follows the session cookie's policy:
 * `__Host-` + Secure wherever the session cookie is. SameSite=Lax: the provider sends the
 * browser back with a top-level GET, which carries Lax cookies.
 */
const bindingCookieName = (policy: SessionCookiePolicy): string =>
  policy.secure ? '__Host-stellwerk_oauth' : 'stellwerk_oauth';

const options = (policy: SessionCookiePolicy) =>
  ({ path: '/', httpOnly: true, secure: policy.secure, sameSite: 'lax' }) as const;

export const presentedBinding = (request: FastifyRequest, policy: SessionCookiePolicy): string | undefined =>
  request.cookies?.[bindingCookieName(policy)] || undefined;

export function setBindingCookie(reply: FastifyReply, policy: SessionCookiePolicy, binding: string): void {
  reply.setCookie(bindingCookieName(policy), binding, {
    ...options(policy),
    maxAge: LOGIN_STATE_TTL_SECONDS,
  });
}

export function clearBindingCookie(reply: FastifyReply, policy: SessionCookiePolicy): void {
  reply.clearCookie(bindingCookieName(policy), options(policy));
}

/**
 * The cookie holding a federated login that waits for the user's Stellwerk code: HttpOnly, so
 * only this browser can finish it, and SameSite=Lax like the binding cookie.
 */
const secondFactorCookieName = (policy: SessionCookiePolicy): string =>
  policy.secure ? '__Host-stellwerk_oauth_2fa' : 'stellwerk_oauth_2fa';

export const presentedSecondFactor = (
  request: FastifyRequest,
  policy: SessionCookiePolicy,
): string | undefined => request.cookies?.[secondFactorCookieName(policy)] || undefined;

export function setSecondFactorCookie(reply: FastifyReply, policy: SessionCookiePolicy, token: string): void {
  reply.setCookie(secondFactorCookieName(policy), token, {
    ...options(policy),
    maxAge: SECOND_FACTOR_TTL_SECONDS,
  });
}

export function clearSecondFactorCookie(reply: FastifyReply, policy: SessionCookiePolicy): void {
  reply.clearCookie(secondFactorCookieName(policy), options(policy));
}
