import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';

/**
 * How a request reached the server: over TLS or not, and from which client. With
 * `STELLWERK_TRUST_PROXY`, Fastify's trustProxy makes `request.ip` the client a trusted proxy names in
 * `X-Forwarded-For` and `request.protocol` its `X-Forwarded-Proto`; every budget, throttle and log
 * line reads those two, so nothing else needs to know about proxies.
 */

const requestOrigin = new AsyncLocalStorage<{ clientAddress: string }>();

/** The client address of the request being handled (for audit lines); undefined outside requests. */
export const currentClientAddress = (): string | undefined => requestOrigin.getStore()?.clientAddress;

/** Fastify's `trustProxy`: the configured proxies, or none (forwarded headers are then ignored). */
export const trustProxyOption = (config: Config): string[] | false =>
  config.trustProxy.length ? config.trustProxy : false;

export function registerTransport(app: FastifyInstance, config: Config): void {
  app.addHook('onRequest', (request, _reply, done) => requestOrigin.run({ clientAddress: request.ip }, done));
  // Over HTTPS, directly or through a trusted proxy: browsers then keep to HTTPS for this host.
  const hsts = `max-age=${config.hstsMaxAge}`;
  app.addHook('onSend', async (request, reply) => {
    if (request.protocol === 'https') reply.header('strict-transport-security', hsts);
  });
}
