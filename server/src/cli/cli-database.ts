import { runningPostmaster } from '../platform/db/running-postmaster.js';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { ENTITIES } from '../entities.js';
import { openDatabase, type Database } from '../platform/db/database.js';
import { openOrm } from '../platform/db/orm.js';
import { StartupError } from '../platform/db/startup-error.js';
import { errorText } from './cli-runtime.js';
import { CliError } from './command.js';

/**
 * The configured database: DATABASE_URL; or the embedded cluster the running server started (its
 * port from `postmaster.pid`, its password from the data directory), shared rather than started a
 * second time, which would stop the server's; or, with no server running, the embedded cluster
 * started for this command and stopped after it.
 */
export async function openCliDatabase(config: Config, log: Logger): Promise<Database> {
  if (config.databaseUrl) return openDatabase(config, log);
  const running = await runningPostmaster(config.dataDir, { unreadable: 'absent' });
  if (running) {
    let password: string;
    try {
      password = (await fs.readFile(path.join(config.dataDir, 'postgres.password'), 'utf8')).trim();
    } catch (error) {
      throw new CliError(
        `the embedded PostgreSQL of ${config.dataDir} is running (pid ${running.pid}) but its password file cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}); run this as the user the server runs as, or as root`,
      );
    }
    const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${running.port}/stellwerk`;
    return { url, embedded: true, serverStopping: () => {}, close: async () => {} };
  }
  try {
    return await openDatabase(config, log);
  } catch (error) {
    if (error instanceof StartupError) throw new CliError(error.message);
    throw error;
  }
}

/** Runs `work` with an ORM on the configured database, then closes both. */
export async function withCliOrm<T>(
  config: Config,
  log: Logger,
  work: (orm: MikroORM, database: Database) => Promise<T>,
): Promise<T> {
  const database = await openCliDatabase(config, log);
  try {
    const orm = await openOrm({ clientUrl: database.url, entities: ENTITIES, log }).catch(
      (error: unknown) => {
        throw new CliError(`cannot connect to the database (${errorText(error)})`);
      },
    );
    try {
      return await work(orm, database);
    } finally {
      await orm.close();
    }
  } finally {
    await database.close();
  }
}
