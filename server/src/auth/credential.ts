import type { FastifyRequest } from 'fastify';
import type { AuthMode } from '../platform/http/route-config.js';

export const SESSION_COOKIE_SECURE = '__Host-stellwerk_session';
/** Plain-HTTP sites other than localhost cannot keep Secure cookies; see docs/adr/0020-session-cookie.md. */
export const SESSION_COOKIE_PLAIN = 'stellwerk_session';

export type CredentialKind = 'apiKey' | 'bearer' | 'cookie';

export interface PresentedCredential {
  kind: CredentialKind;
  secret: string;
}

/**
 * The one credential a request is authenticated with on a route of this mode, chosen by the same
 * precedence everywhere: `x-api-key`, then `Authorization: Bearer`, then the console cookie. The
 * authenticator resolves it and the CSRF check asks whether it is the cookie, so the two can never
 * disagree (an `Authorization: Basic …` header, say, leaves the cookie in charge).
 */
export function presentedCredential(request: FastifyRequest, mode: AuthMode): PresentedCredential | null {
  // A public dashboard's key is no account credential, and a console cookie must not count there.
  if (mode === 'public' || mode === 'dashboardKey') return null;
  const apiKey = headerValue(request.headers['x-api-key']);
  if (apiKey) return { kind: 'apiKey', secret: apiKey };
  // The hub API takes API keys only.
  if (mode === 'hub') return null;
  const bearer = /^Bearer\s+(\S+)$/i.exec(headerValue(request.headers.authorization) ?? '')?.[1];
  if (bearer) return { kind: 'bearer', secret: bearer };
  const cookie = request.cookies?.[SESSION_COOKIE_SECURE] ?? request.cookies?.[SESSION_COOKIE_PLAIN];
  if (cookie) return { kind: 'cookie', secret: cookie };
  return null;
}

const headerValue = (value: string | string[] | undefined): string | undefined =>
  (Array.isArray(value) ? value[0] : value)?.trim() || undefined;
