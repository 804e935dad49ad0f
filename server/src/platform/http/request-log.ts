import type { FastifyInstance } from 'fastify';

/**
 * One log line per answered request, at `debug` only (Fastify's own two lines per request at `info`
 * are off: they were nearly all of an idle server's log). The route template, never the raw URL,
 * which may carry a webhook token or a setup token.
 */
export function logRequestsAtDebug(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    request.log.debug(
      {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        statusCode: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request',
    );
    done();
  });
}
