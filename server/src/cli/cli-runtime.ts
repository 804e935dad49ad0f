import fs from 'node:fs/promises';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { ENTITIES } from '../entities.js';
import { openDatabase, type Database } from '../platform/db/database.js';
import { openOrm } from '../platform/db/orm.js';
import { StartupError } from '../platform/db/startup-error.js';
import { createLogger } from '../platform/logging/logger.js';
import { CliError, type CliIo } from './command.js';

/**
 * What the `stellwerk` subcommands share: the server's configuration (environment, then
 * `stellwerk.conf`), a logger on stderr (stdout is the command's own output), and the configured
 * database, whether or not the server is running.
 */

export function cliConfig(io: CliIo): Config {
  try {
    return loadConfig(io.env);
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message);
    throw error;
  }
}

export function cliLogger(config: Config): Logger {
  return createLogger({
    level: config.logLevel,
    format: config.logFormat,
    base: { node: config.nodeName },
    output: 'stderr',
  });
}

/** A live embedded PostgreSQL of this data directory, from its `postmaster.pid`. */
export interface RunningPostmaster {
  pid: number;
  port: number;
}

/**
 * `postmaster.pid` lines: pid, data directory, start time, port, … A file naming a dead process is
 * what a crash leaves behind; PostgreSQL itself treats it as stale.
 */
export async function runningEmbeddedPostmaster(dataDir: string): Promise<RunningPostmaster | undefined> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8');
  } catch {
    return undefined;
  }
  const [pidLine, , , portLine] = text.split('\n');
  const pid = Number(pidLine);
  const port = Number(portLine);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || !processAlive(pid)) return undefined;
  return { pid, port };
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user (the `postgres` user when the server runs as root).
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The configured database: DATABASE_URL; or the embedded cluster the running server started (its
 * port from `postmaster.pid`, its password from the data directory), shared rather than started a
 * second time, which would stop the server's; or, with no server running, the embedded cluster
 * started for this command and stopped after it.
 */
export async function openCliDatabase(config: Config, log: Logger): Promise<Database> {
  if (config.databaseUrl) return openDatabase(config, log);
  const running = await runningEmbeddedPostmaster(config.dataDir);
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
    return { url, embedded: true, close: async () => {} };
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

export function errorText(error: unknown): string {
  return error instanceof Error && error.message ? error.message : String(error);
}

/** `--name value` or `--name=value`; undefined when absent. */
export function option(args: string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === `--${name}`) {
      const value = args[i + 1];
      if (value === undefined || value.startsWith('--')) throw new CliError(`--${name} needs a value`, 2);
      return value;
    }
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3);
  }
  return undefined;
}

export function flag(args: string[], name: string): boolean {
  return args.includes(`--${name}`);
}

/** Refuses options a command does not know, so a typo is not silently ignored. */
export function assertKnownOptions(args: string[], known: { values?: string[]; flags?: string[] }): void {
  const values = known.values ?? [];
  const flags = known.flags ?? [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) throw new CliError(`unexpected argument "${arg}"`, 2);
    const name = arg.slice(2).split('=')[0]!;
    if (values.includes(name)) {
      if (!arg.includes('=')) i++;
    } else if (!flags.includes(name)) {
      throw new CliError(`unknown option --${name}`, 2);
    }
  }
}
