// First, before anything loads mqtt-packet: its disabled debug loggers become no-ops (see the module).
import './broker/quiet-packet-debug.js';
import { buildServer } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { configLogFields, settingsFileNote } from './config-report.js';
import { ENTITIES } from './entities.js';
import { SecretBox } from './platform/crypto/secret-box.js';
import { loadSecretKey } from './platform/crypto/secret-key.js';
import { MIGRATION_LOCK, withAdvisoryLock } from './platform/db/advisory-lock.js';
import { openDatabase, type Database } from './platform/db/database.js';
import type { DatabaseAvailability } from './platform/db/database-availability.js';
import { ensureWritableDataDir } from './platform/db/data-dir.js';
import { createLogger } from './platform/logging/logger.js';
import { StartupError } from './platform/db/startup-error.js';
import { migrateUp, openOrm } from './platform/db/orm.js';
import { LifecycleRunner } from './platform/lifecycle.js';
import { loadHttpsCertificate } from './platform/tls/https-certificate.js';
import { httpsParts } from './platform/tls/https-parts.js';
import { VERSION } from './version.js';
import { guardUpgrade, recordRunningVersion } from './backup/upgrade-guard.js';
import { RequestContext } from '@mikro-orm/postgresql';

/** Process entry: config → database → migrations → HTTP → background parts; reverse on SIGTERM. */
async function main(): Promise<void> {
  const startedAt = performance.now();
  const config = loadConfig();
  const log = createLogger({
    level: config.logLevel,
    format: config.logFormat,
    base: { node: config.nodeName },
  });
  log.info(
    { settingsFile: settingsFileNote(config), config: configLogFields(config) },
    'effective configuration (secrets masked)',
  );
  // Known once the server is built; the embedded supervisor tells it at once when PostgreSQL exits.
  const availability: { current?: DatabaseAvailability } = {};
  const openedDatabase: { current?: Database } = {};
  const runner = new LifecycleRunner(log);
  stopOnStartupFailure = () => runner.stopAll();
  const shutdown = (signal: string, exitCode = 0) => {
    log.info({ signal }, 'shutting down');
    openedDatabase.current?.serverStopping();
    availability.current?.serverStopping();
    const force = setTimeout(() => process.exit(1), config.shutdownGraceMs + 15_000);
    force.unref();
    void runner.stopAll().then(() => process.exit(exitCode));
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));

  // Checked in every mode: the secret key (and later spools) live there even with DATABASE_URL.
  await ensureWritableDataDir(config.dataDir);
  const httpsCertificate = await loadHttpsCertificate(config, log);
  const database = await openDatabase(config, log, {
    onExit: () => availability.current?.suspect(),
    onRecovered: () => availability.current?.suspect(),
    // The service manager (systemd Restart=on-failure) restarts the whole server.
    onGiveUp: () => shutdown('embedded PostgreSQL gave up', 1),
  });
  openedDatabase.current = database;
  await runner.start({ name: 'database', start: async () => {}, stop: () => database.close() });

  const orm = await openOrm({ clientUrl: database.url, entities: ENTITIES, log }).catch((error: unknown) => {
    throw database.embedded ? error : databaseConnectError(error, database.url);
  });
  await runner.start({ name: 'orm', start: async () => {}, stop: () => orm.close() });

  const secretBox = new SecretBox(await loadSecretKey(config.secretKey, config.dataDir));
  const { app, ctx, services } = await buildServer({
    config,
    orm,
    secretBox,
    logger: log,
    ...(httpsCertificate ? { https: httpsCertificate } : {}),
  });
  availability.current = ctx.database;

  const boot = await withAdvisoryLock(database.url, MIGRATION_LOCK, async () => {
    // Refuses a newer database; backs an older one up before the first migration touches it.
    await guardUpgrade({ databaseUrl: database.url, embeddedDatabase: database.embedded, config, log });
    const applied = await migrateUp(orm);
    if (applied.length) log.info({ applied }, 'migrations applied');
    await recordRunningVersion(database.url);
    return RequestContext.create(orm.em, () => services.bootstrap.run(config, log));
  });
  for (const part of ctx.lifecycle) await runner.start(part);

  await runner.start({
    name: 'http',
    start: async () => {
      try {
        await app.listen({ host: config.httpHost, port: config.httpPort });
      } catch (error) {
        throw httpListenError(error, config.httpHost, config.httpPort);
      }
    },
    // close() stops accepting at once and waits for in-flight requests; the grace timer bounds it.
    stop: () =>
      Promise.race([app.close(), new Promise<void>((r) => setTimeout(r, config.shutdownGraceMs).unref())]),
  });
  for (const part of httpsParts(config, app, log)) await runner.start(part);
  const address = app.server.address();
  const httpPort = typeof address === 'object' && address ? address.port : config.httpPort;
  if (boot.setupToken) {
    // Logged once the port is known (STELLWERK_HTTP_PORT=0 picks one) and before "ready", which
    // launchers wait for.
    const consoleUrl = new URL(config.publicUrl);
    if (consoleUrl.port === '0') consoleUrl.port = String(httpPort);
    log.warn(
      { onboarding: `${consoleUrl.toString().replace(/\/$/, '')}/onboarding?token=${boot.setupToken}` },
      `No admin exists yet. Open the console and enter this one-time setup token: ${boot.setupToken}`,
    );
  }
  log.info(
    {
      version: VERSION,
      httpPort,
      embeddedDatabase: database.embedded,
      startupMs: Math.round(performance.now() - startedAt),
    },
    `Stellwerk is ready on http${httpsCertificate ? 's' : ''}://${config.httpHost === '0.0.0.0' ? 'localhost' : config.httpHost}:${httpPort}`,
  );
}

/** Names DATABASE_URL and where it points, never its password. */
function databaseConnectError(error: unknown, url: string): StartupError {
  const target = new URL(url);
  const where = `${target.hostname}:${target.port || 5432}${target.pathname}`;
  const reason = error instanceof Error && error.message ? error.message : String(error);
  return new StartupError(
    `DATABASE_URL: cannot connect to PostgreSQL at ${where} as "${decodeURIComponent(target.username)}" (${reason})`,
  );
}

function httpListenError(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    return new StartupError(
      `STELLWERK_HTTP_PORT ${port} is already in use on ${host}; set STELLWERK_HTTP_PORT to a free port (0 picks one)`,
    );
  }
  if (code === 'EACCES') {
    return new StartupError(
      `STELLWERK_HTTP_PORT ${port} needs privileges this user lacks; use a port above 1023`,
    );
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new StartupError(`STELLWERK_HTTP_HOST ${host} is not an address of this machine`);
  }
  return error;
}

/** Set once the runner exists: a failed start must still stop what it started (the embedded PostgreSQL). */
let stopOnStartupFailure: () => Promise<void> = async () => {};

main().catch(async (error: unknown) => {
  if (error instanceof ConfigError || error instanceof StartupError) {
    console.error(`Stellwerk cannot start: ${error.message}`);
  } else {
    console.error('Stellwerk failed to start', error);
  }
  const force = setTimeout(() => process.exit(1), 15_000);
  force.unref();
  await stopOnStartupFailure().catch(() => undefined);
  process.exit(1);
});
