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

/** The console's cookie policy for one request (the console can be reached under several names). */
export type ConsoleCookiePolicy = (request: FastifyRequest) => SessionCookiePolicy;

/** A request's host as a browser sees it: loopback names are secure contexts even over http. */
const isLoopbackHost = (hostname: string): boolean =>
  LOOPBACK_HOSTS.has(hostname) || hostname === '::1' || hostname.endsWith('.localhost');

/**
 * The console session cookie per request. An https STELLWERK_PUBLIC_URL, or a plain-http one that is
 * not loopback, decides for every request (`sessionCookiePolicy`). The default public URL is
 * loopback: then a browser that reached the console over https or under a loopback name gets the
 * Secure cookie, and one on another machine over plain http (`http://192.0.2.10:8080`) the
 * unprefixed one, which that browser keeps: a Secure cookie would be dropped and every login would
 * end at once. The first such request is logged, with how to serve Stellwerk over https.
 */
export function consoleCookiePolicy(publicUrl: string, log?: FastifyBaseLogger): ConsoleCookiePolicy {
  const site = sessionCookiePolicy(publicUrl, log);
  const url = new URL(publicUrl);
  if (url.protocol === 'https:' || !site.secure) return () => site;
  const plain: SessionCookiePolicy = { name: SESSION_COOKIE_PLAIN, secure: false };
  let warned = false;
  return (request) => {
    if (request.protocol === 'https' || isLoopbackHost(request.hostname)) return site;
    if (!warned) {
      warned = true;
      log?.warn(
        { host: request.hostname },
        'the console was reached over plain http from another machine: its session cookie cannot be Secure there; set STELLWERK_PUBLIC_URL to the https address and serve Stellwerk over https',
      );
    }
    return plain;
  };
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
