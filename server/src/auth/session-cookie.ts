import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE_PLAIN, SESSION_COOKIE_SECURE } from './credential.js';

/** Which cookie the console session uses on this site; see docs/adr/0020-session-cookie.md. */
export interface SessionCookiePolicy {
  name: string;
  secure: boolean;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * `__Host-` + Secure wherever browsers keep Secure cookies: https, and http on loopback (a
 * secure context). A plain-http site elsewhere would never get its cookie back, so it falls back
 * to an unprefixed cookie without Secure, and says so once at start.
 */
export function sessionCookiePolicy(publicUrl: string, log?: FastifyBaseLogger): SessionCookiePolicy {
  const url = new URL(publicUrl);
  if (url.protocol === 'https:' || LOOPBACK_HOSTS.has(url.hostname))
    return { name: SESSION_COOKIE_SECURE, secure: true };
  log?.warn(
    { publicUrl },
    'STELLWERK_PUBLIC_URL is plain http: the console session cookie cannot be Secure; serve Stellwerk over https',
  );
  return { name: SESSION_COOKIE_PLAIN, secure: false };
}

export function setSessionCookie(
  reply: FastifyReply,
  policy: SessionCookiePolicy,
  token: string,
  maxAgeSeconds: number,
): void {
  reply.setCookie(policy.name, token, {
    path: '/',
    httpOnly: true,
    secure: policy.secure,
    sameSite: 'lax',
    maxAge: maxAgeSeconds,
  });
}

export function clearSessionCookie(reply: FastifyReply, policy: SessionCookiePolicy): void {
  reply.clearCookie(policy.name, { path: '/', httpOnly: true, secure: policy.secure, sameSite: 'lax' });
}

/** The session token the browser sent, under either cookie name (as authenticate.ts reads it). */
export const presentedSessionToken = (request: FastifyRequest): string | undefined =>
  request.cookies?.[SESSION_COOKIE_SECURE] ?? request.cookies?.[SESSION_COOKIE_PLAIN] ?? undefined;
