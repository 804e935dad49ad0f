import cookie from '@fastify/cookie';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { RequestContext, type MikroORM } from '@mikro-orm/postgresql';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyReply } from 'fastify';
import type { Config } from './config.js';
import type { App, AppContext, RouteInfo } from './context.js';
import { createAuthenticator } from './auth/authenticate.js';
import { CredentialFailureLimiter } from './auth/credential-failures.js';
import { csrfGuard } from './auth/csrf.js';
import { createRequestAuth } from './auth/request-auth.js';
import { newId } from './platform/crypto/ids.js';
import type { SecretBox } from './platform/crypto/secret-box.js';
import { DatabaseAvailability } from './platform/db/database-availability.js';
import { errors } from './platform/errors.js';
import { registerErrorHandling, toErrorReply } from './platform/http/error-handler.js';
import { registerTransport, trustProxyOption } from './platform/http/transport.js';
import { assertSafeInput } from './platform/http/input-guard.js';
import { ErrorBody } from './platform/http/schemas.js';
import { registerValidation } from './platform/http/validation.js';
import { registerListCsv } from './platform/http/list-csv.js';
import { registerCompression } from './platform/http/compression.js';
import { logRequestsAtDebug } from './platform/http/request-log.js';
import { Metrics } from './platform/metrics.js';
import { registerSystemMetrics } from './platform/system-metrics.js';
import { registerDomains } from './routes.js';
import type { Services } from './services.js';
import { VERSION } from './version.js';

export interface ServerDeps {
  config: Config;
  orm: MikroORM;
  secretBox: SecretBox;
  logger: FastifyBaseLogger | boolean | Record<string, unknown>;
  clock?: () => Date;
  nodeId?: string;
  /** With it, the HTTP port serves HTTPS (platform/tls/https-certificate.ts). */
  https?: { cert: Buffer; key: Buffer };
}

/** Everything wired: used by main.ts and by the tests (which pass a test database and clock). */
export async function buildServer(
  deps: ServerDeps,
): Promise<{ app: App; ctx: AppContext; services: Services }> {
  const { config, orm } = deps;
  const fastify = Fastify({
    ...(typeof deps.logger === 'object' && 'child' in deps.logger
      ? { loggerInstance: deps.logger as FastifyBaseLogger }
      : { logger: deps.logger }),
    ...(deps.https ? { https: { cert: deps.https.cert, key: deps.https.key } } : {}),
    bodyLimit: config.bodyLimitBytes,
    // One line per request at debug (request-log.ts) instead of two at info.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: trustProxyOption(config),
    genReqId: () => newId(),
    routerOptions: { maxParamLength: 200, ignoreTrailingSlash: true },
    // Router-level refusals (malformed URL, over-long parameter) get the same error body as the rest.
    frameworkErrors: (error, _request, reply) => {
      const { status, body, headers } = toErrorReply(error);
      void (reply as unknown as FastifyReply).status(status).headers(headers).send(body);
    },
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
  }).withTypeProvider<TypeBoxTypeProvider>();
  const app = fastify as unknown as App;

  const metrics = new Metrics({ node: config.nodeName });
  registerSystemMetrics(metrics, { orm, dataDir: config.dataDir, spoolDir: config.spoolDir });
  const database = new DatabaseAvailability({
    databaseUrl: String(orm.config.get('clientUrl')),
    log: app.log,
    metrics,
  });
  const clock = deps.clock ?? (() => new Date());
  const ctx: AppContext = {
    config,
    orm,
    em: () => orm.em,
    database,
    log: app.log,
    secretBox: deps.secretBox,
    metrics,
    clock,
    credentialFailures: new CredentialFailureLimiter(
      config.authFailuresPerAddress,
      config.rateLimitWindowMs,
      () => clock().getTime(),
    ),
    nodeId: deps.nodeId ?? newId(),
    // First to start, last to stop: the other parts' failures are read against it.
    lifecycle: [database],
    routes: [],
  };

  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      ctx.routes.push({
        method,
        url: route.url,
        config: (route.config ?? {}) as RouteInfo['config'],
        schema: route.schema as RouteInfo['schema'],
      });
    }
  });
  // JSON only, unless a route registers a parser of its own (CSV import: text/csv). text/plain,
  // like form and multipart bodies, is what a cross-site form or no-cors fetch can send: 415.
  app.removeContentTypeParser('text/plain');
  registerValidation(app);
  registerListCsv(app);
  registerTransport(app, config);
  logRequestsAtDebug(app);
  registerErrorHandling(app, database);
  app.addSchema(ErrorBody);
  app.decorateRequest('principal', null);
  ctx.metrics.register(app, { token: config.metricsToken });
  registerCompression(app);

  await app.register(cookie);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Stellwerk XAPI', version: VERSION, description: 'REST API of Stellwerk.' },
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        },
      },
      security: [{ bearer: [] }, { apiKey: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/xapi/v1/docs', uiConfig: { deepLinking: true } });
  app.get('/xapi/v1/openapi.json', { config: { auth: 'public' }, schema: { hide: true } }, () =>
    app.swagger(),
  );

  // Each request gets its own EntityManager; identity maps never leak between requests.
  app.addHook('onRequest', (_request, _reply, done) => RequestContext.create(orm.em, done));

  const requestAuth = createRequestAuth(createAuthenticator(ctx.em, ctx.clock), ctx.credentialFailures);
  // Global, so before the per-route rate limiter and auth hook: a forged request costs no lookup.
  app.addHook('onRequest', csrfGuard(config.publicUrl));
  await app.register(rateLimit, {
    global: true,
    max: config.rateLimitMax,
    timeWindow: config.rateLimitWindowMs,
    hook: 'onRequest',
    // Keyed on whom the credential resolves to, so spelling it differently buys no fresh budget.
    // The lookup is the auth hook's own (done once per request): a limited principal costs one
    // indexed query, an address sending invalid credentials none once it is over its failures.
    keyGenerator: (request) => requestAuth.rateLimitKey(request),
    allowList: (request) => ['/health', '/metrics'].includes(request.url),
    errorResponseBuilder: (_request, context) =>
      errors.tooManyRequests(
        'API_LIMIT_REACHED',
        `API request limit of ${context.max} per ${context.after} reached; retry later`,
        Math.max(1, Math.ceil(context.ttl / 1000)),
      ),
  });
  // Per route, after the rate limiter's own per-route hook: a refusal (invalid token, missing
  // permission) has used up budget too, and a limited client gets 429, never INVALID_TOKEN.
  app.addHook('onRoute', (route) => {
    const existing = route.onRequest ? [route.onRequest].flat() : [];
    route.onRequest = [...existing, requestAuth.hook];
  });
  app.addHook('preValidation', async (request) => {
    assertSafeInput(request.body, 'body');
    assertSafeInput(request.query, 'querystring');
    assertSafeInput(request.params, 'params');
  });

  // Liveness without a query: the availability probe's last answer, so it stays instant.
  app.get('/health', { config: { auth: 'public', rateLimit: false }, schema: { hide: true } }, (_r, reply) =>
    database.up
      ? { status: 'ok' }
      : reply.status(503).send({
          status: 'unavailable',
          database: 'unreachable',
          message: 'The database is unreachable; Stellwerk keeps accepting packets and retries.',
        }),
  );

  const services = await registerDomains(app, ctx);
  return { app, ctx, services };
}

export type { TypeBoxTypeProvider };
