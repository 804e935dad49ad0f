import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../platform/errors.js';
import type { AuthMode } from '../platform/http/route-config.js';
import { presentedCredential, type CredentialKind } from './credential.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export const CSRF_HEADER = 'x-requested-with';

/** What the CSRF rule looks at; see `needsCsrfProof`. */
export interface CsrfSubject {
  method: string;
  /** The matched route pattern, not the raw URL. */
  route: string;
  /** The credential the request is authenticated with on that route, if any. */
  credential: CredentialKind | null;
}

/**
 * A state-changing request needs the proof when the browser's cookie is what authenticates it,
 * whatever the prefix (`/api`, `/xapi`, …): SameSite=Lax sends the cookie along from same-site pages
 * (another port, a sibling subdomain). Every console route (`/api/…`) needs it too, so the login and
 * logout cannot be forged either (login CSRF). Requests carrying a bearer token or API key are
 * exempt: a foreign page cannot attach those headers without a CORS preflight.
 */
export const needsCsrfProof = ({ method, route, credential }: CsrfSubject): boolean =>
  !SAFE_METHODS.has(method) && (credential === 'cookie' || route.startsWith('/api/'));

/**
 * CSRF defence on top of SameSite=Lax: a request that `needsCsrfProof` must carry `X-Requested-With`
 * (a cross-origin page cannot send a custom header without a CORS preflight, which Stellwerk never
 * grants) or an `Origin` equal to STELLWERK_PUBLIC_URL's; otherwise 403 CSRF_CHECK_FAILED. Runs
 * before the credential is looked up. See docs/adr/0020-session-cookie.md.
 */
export function csrfGuard(publicUrl: string) {
  const allowedOrigin = new URL(publicUrl).origin;
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const route = request.routeOptions.url;
    // Unknown routes answer 404 as everywhere else.
    if (!route) return;
    const mode: AuthMode = request.routeOptions.config.auth ?? 'principal';
    const credential = presentedCredential(request, mode)?.kind ?? null;
    if (!needsCsrfProof({ method: request.method, route, credential })) return;
    if (request.headers[CSRF_HEADER]) return;
    if (request.headers.origin === allowedOrigin) return;
    throw errors.forbidden(
      'CSRF_CHECK_FAILED',
      `State-changing requests with the console session cookie need an ${CSRF_HEADER} header or a same-origin Origin header`,
    );
  };
}
