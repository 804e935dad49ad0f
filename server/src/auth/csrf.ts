import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../platform/errors.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export const CSRF_HEADER = 'x-requested-with';

/**
 * CSRF defence for the console's cookie API (`/api/…`), on top of SameSite=Lax: a state-changing
 * request must carry `X-Requested-With` (a cross-site page cannot send a custom header without a
 * CORS preflight, which Stellwerk never grants) or an `Origin` equal to STELLWERK_PUBLIC_URL's.
 * Applied to every state-changing `/api/` request, login included (login CSRF). The XAPI and
 * hub API take credentials only from headers, which a foreign page cannot attach, so they are exempt.
 * See docs/adr/0020-session-cookie.md.
 */
export function csrfGuard(publicUrl: string) {
  const allowedOrigin = new URL(publicUrl).origin;
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    if (SAFE_METHODS.has(request.method) || !request.url.startsWith('/api/')) return;
    // Unknown routes answer 404 as everywhere else.
    if (!request.routeOptions.url) return;
    if (request.headers[CSRF_HEADER]) return;
    if (request.headers.origin === allowedOrigin) return;
    throw errors.forbidden(
      'CSRF_CHECK_FAILED',
      `State-changing console requests need an ${CSRF_HEADER} header or a same-origin Origin header`,
    );
  };
}
