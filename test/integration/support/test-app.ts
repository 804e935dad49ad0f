import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RequestContext, type MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger, LightMyRequestResponse } from 'fastify';
import { buildServer } from '../../../server/src/app.js';
import { loadConfig, type Config } from '../../../server/src/config.js';
import type { App, AppContext } from '../../../server/src/context.js';
import { ENTITIES } from '../../../server/src/entities.js';
import { SecretBox } from '../../../server/src/platform/crypto/secret-box.js';
import { openOrm } from '../../../server/src/platform/db/orm.js';
import type { Services } from '../../../server/src/services.js';
import { createTestDatabase } from './database.js';

export const ADMIN_EMAIL = 'admin@stellwerk.test';
export const ADMIN_PASSWORD = 'correct horse battery staple';

export interface TestApp {
  app: App;
  ctx: AppContext;
  services: Services;
  orm: MikroORM;
  config: Config;
  rootAccountId: string;
  /** The onboarding token bootstrap printed (only with `admin: false`). */
  setupToken?: string;
  /** Runs service code inside a fresh ORM context, as a request would. */
  withContext<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: () => Date;
  /** false: no STELLWERK_ADMIN_*, so bootstrap hands out an onboarding token instead. */
  admin?: boolean;
  /** The URL the server uses for its test database (e.g. through a TCP proxy the test can cut). */
  databaseUrl?: (url: string) => string;
  /** The server's logger (default: none), for tests that read what the server logs. */
  logger?: FastifyBaseLogger;
}

/** The real server against a fresh database; requests go through `app.inject`. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const db = await createTestDatabase();
  const databaseUrl = options.databaseUrl?.(db.url) ?? db.url;
  // Each app its own packet spool: a spool directory belongs to one server at a time.
  const spoolDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-test-spool-'));
  const config = loadConfig({
    STELLWERK_DATA_DIR: path.join(os.tmpdir(), 'stellwerk-test-unused'),
    STELLWERK_SPOOL_DIR: spoolDir,
    DATABASE_URL: databaseUrl,
    ...(options.admin === false
      ? {}
      : { STELLWERK_ADMIN_EMAIL: ADMIN_EMAIL, STELLWERK_ADMIN_PASSWORD: ADMIN_PASSWORD }),
    STELLWERK_LOG_LEVEL: 'silent',
    STELLWERK_RATE_LIMIT_MAX: '100000',
    STELLWERK_AUTH_FAILURES_PER_ADDRESS: '100000',
    // Receivers started by tests (webhooks, SMTP, Mosquitto) listen on loopback, which SSRF protection refuses by default.
    STELLWERK_OUTGOING_ALLOW_PRIVATE: '127.0.0.0/8,::1',
    ...options.env,
  });
  const orm = await openOrm({ clientUrl: databaseUrl, entities: ENTITIES, poolMax: 5 });
  const { app, ctx, services } = await buildServer({
    config,
    orm,
    secretBox: new SecretBox(randomBytes(32)),
    logger: options.logger ?? false,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const withContext = <T>(fn: () => Promise<T>) => RequestContext.create(orm.em.fork(), fn);
  const boot = await withContext(() => services.bootstrap.run(config, app.log));
  await app.ready();
  // Packets become device states in tests as in production: the spool takes them, the ingest worker
  // stores them in `packets` and processes them (replay from the cursor, then follow).
  await services.packets.start();
  await services.ingest.start();
  return {
    app,
    ctx,
    services,
    orm,
    config,
    rootAccountId: boot.rootAccountId,
    ...(boot.setupToken ? { setupToken: boot.setupToken } : {}),
    withContext,
    close: async () => {
      await app.close();
      await services.ingest.stop();
      // Flows write their last runs and the dispatcher closes its clients while the database is there.
      await services.flowRunner.stop();
      await services.outgoingDispatcher.stop();
      // The state engine's pool opens on first use (lifecycle parts are not started in tests).
      await services.stateEngine.stop();
      await services.packets.stop();
      fs.rmSync(spoolDir, { recursive: true, force: true });
      await orm.close();
      await db.drop();
    },
  };
}

export const json = <T = Record<string, unknown>>(response: LightMyRequestResponse): T => response.json<T>();
