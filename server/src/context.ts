import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { CredentialFailureLimiter } from './auth/credential-failures.js';
import type { Config } from './config.js';
import type { SecretBox } from './platform/crypto/secret-box.js';
import type { DatabaseAvailability } from './platform/db/database-availability.js';
import type { Lifecycle } from './platform/lifecycle.js';
import type { Metrics } from './platform/metrics.js';
import type { RouteConfig } from './platform/http/route-config.js';

export interface RouteInfo {
  method: string;
  url: string;
  config: Partial<RouteConfig>;
  schema: Record<string, unknown> | undefined;
}

/** What every domain module receives: infrastructure, never another domain's tables. */
export interface AppContext {
  config: Config;
  orm: MikroORM;
  /** The request's EntityManager (RequestContext); background work forks its own. */
  em: () => EntityManager;
  /** Whether PostgreSQL answers (probed): `/health`, the health-check and error replies read it. */
  database: DatabaseAvailability;
  log: FastifyBaseLogger;
  secretBox: SecretBox;
  metrics: Metrics;
  /**
   * Refused credentials per client address: every credential check (headers, webhook URL tokens)
   * counts here, and an address over its budget is refused before its next lookup.
   */
  credentialFailures: CredentialFailureLimiter;
  /** Injectable so tests control time (TOTP, expiry, heartbeats). */
  clock: () => Date;
  /** This server process's id in `server_nodes`. */
  nodeId: string;
  /** Every registered route with its config and schema; generated tests walk this table. */
  routes: RouteInfo[];
  /** Background parts domains add (heartbeat, jobs …); main.ts starts them after migrations. */
  lifecycle: Lifecycle[];
}

export type App = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
