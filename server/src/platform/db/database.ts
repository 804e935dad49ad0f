import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { EmbeddedDatabase, type EmbeddedSupervision } from './embedded-postgres.js';

export interface Database {
  url: string;
  embedded: boolean;
  /** The server is stopping: an embedded PostgreSQL that exits now is not restarted or reported. */
  serverStopping(): void;
  close(): Promise<void>;
}

/**
 * The external database from DATABASE_URL, or the embedded cluster in the data directory, which is
 * restarted when it exits unexpectedly (`supervision`; an external one is its operator's to run).
 */
export async function openDatabase(
  config: Config,
  log: Logger,
  supervision?: Omit<EmbeddedSupervision, 'maxAttempts'>,
): Promise<Database> {
  if (config.databaseUrl)
    return { url: config.databaseUrl, embedded: false, serverStopping: () => {}, close: async () => {} };
  const embedded = new EmbeddedDatabase({
    dataDir: path.resolve(config.dataDir),
    port: config.pgPort,
    database: 'stellwerk',
    log,
    ...(supervision ? { supervise: { ...supervision, maxAttempts: config.pgRestartAttempts } } : {}),
  });
  const url = await embedded.start();
  return {
    url,
    embedded: true,
    serverStopping: () => embedded.serverStopping(),
    close: () => embedded.stop(),
  };
}
