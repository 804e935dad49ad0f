import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errors } from '../platform/errors.js';
import { clientAddress } from '../platform/http/client-address.js';
import { grants } from '../roles/permissions.js';
import type { Authenticator } from './authenticate.js';
import { presentedCredential } from './credential.js';
import type { CredentialFailureLimiter } from './credential-failures.js';
import type { Principal } from './principal.js';

type Outcome = { principal: Principal | null } | { error: unknown };

export interface RequestAuth {
  /**
   * The API rate limit's key: the principal the credential resolves to (the user for any session,
   * the API key), however the credential was spelled or carried; the client address for public
   * routes and for credentials that resolve to no one.
   */
  rateLimitKey: (request: FastifyRequest) => Promise<string>;
  /** Route hook: the request's principal per the route's `auth`, then its `permission`. */
  hook: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
}

/**
 * Authenticates each request once, for the rate limiter (which runs first, to key on the
 * principal) and for the route's auth hook. Before any lookup, an address that sent too many
 * invalid credentials is refused; every invalid credential counts against its address.
 */
export function createRequestAuth(
  authenticator: Authenticator,
  failures: CredentialFailureLimiter,
): RequestAuth {
  const outcomes = new WeakMap<FastifyRequest, Promise<Outcome>>();

  async function resolve(request: FastifyRequest): Promise<Outcome> {
    const mode = request.routeOptions.config.auth ?? 'principal';
    if (mode === 'public' || mode === 'dashboardKey') return { principal: null };
    // Presenting nothing is the probe's answer (signed out), not a failed credential.
    if (mode === 'optionalUser' && !presentedCredential(request, mode)) return { principal: null };
    const address = clientAddress(request.ip);
    try {
      failures.assertAllowed(address);
      return { principal: await authenticator.authenticate(request, mode) };
    } catch (error) {
      if (error instanceof AppError && error.code === 'INVALID_TOKEN') {
        failures.record(address);
        if (mode === 'optionalUser') return { principal: null };
      }
      return { error };
    }
  }

  function outcome(request: FastifyRequest): Promise<Outcome> {
    let pending = outcomes.get(request);
    if (!pending) {
      pending = resolve(request);
      outcomes.set(request, pending);
    }
    return pending;
  }

  return {
    async rateLimitKey(request) {
      const resolved = await outcome(request);
      const principal = 'principal' in resolved ? resolved.principal : null;
      if (principal?.userId) return `user:${principal.userId}`;
      if (principal?.apiKeyId) return `apiKey:${principal.apiKeyId}`;
      return `ip:${clientAddress(request.ip)}`;
    },

    async hook(request) {
      const resolved = await outcome(request);
      if ('error' in resolved) throw resolved.error;
      request.principal = resolved.principal;
      const permission = request.routeOptions.config.permission;
      if (permission && request.principal && !grants(request.principal.permissions, permission)) {
        throw errors.noPermission(permission);
      }
    },
  };
}
