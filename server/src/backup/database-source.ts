import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { EmbeddedDatabase } from '../platform/db/embedded-postgres.js';
import { runningPostmaster } from '../platform/db/running-postmaster.js';

/** The database the embedded cluster serves Stellwerk from (platform/db/database.ts). */
export const EMBEDDED_DATABASE = 'stellwerk';

export interface CommandDatabase {
  url: string;
  embedded: boolean;
  /** How it was reached, for the command's output. */
  via: 'external' | 'running-server' | 'started-for-this-command';
  close(): Promise<void>;
}

/**
 * The database of the configured installation, for a command run beside (or instead of) the
 * server: `DATABASE_URL`; else the embedded PostgreSQL the running server started (found through
 * its `postmaster.pid`, which names the port also when STELLWERK_PG_PORT is 0); else the embedded
 * cluster started for the command on a free port and stopped by `close`.
 */
export async function openCommandDatabase(config: Config, log: Logger): Promise<CommandDatabase> {
  if (config.databaseUrl)
    return { url: config.databaseUrl, embedded: false, via: 'external', close: async () => {} };
  const clusterDir = path.join(config.dataDir, 'postgres');
  const running = await runningPostmaster(config.dataDir, { unreadable: 'throw' });
  if (running) {
    return {
      url: await embeddedUrl(config.dataDir, running.port),
      embedded: true,
      via: 'running-server',
      close: async () => {},
    };
  }
  if (!existsSync(path.join(clusterDir, 'PG_VERSION')))
    throw new Error(`there is no database in ${clusterDir} (STELLWERK_DATA_DIR) and DATABASE_URL is not set`);
  const database = new EmbeddedDatabase({
    dataDir: config.dataDir,
    port: 0,
    database: EMBEDDED_DATABASE,
    log,
  });
  const url = await database.start();
  return { url, embedded: true, via: 'started-for-this-command', close: () => database.stop() };
}

async function embeddedUrl(dataDir: string, port: number): Promise<string> {
  const file = path.join(dataDir, 'postgres.password');
  let password: string;
  try {
    password = (await readFile(file, 'utf8')).trim();
  } catch (error) {
    throw new Error(
      `cannot read ${file} (${(error as NodeJS.ErrnoException).code}); run this command as the user the server runs as`,
      { cause: error },
    );
  }
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${EMBEDDED_DATABASE}`;
}
