import type { Logger } from 'pino';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { createLogger } from '../platform/logging/logger.js';
import { CliError, type CliIo } from './command.js';

/**
 * What the `stellwerk` subcommands share: the server's configuration (environment, then
 * `stellwerk.conf`), a logger on stderr (stdout is the command's own output), and option parsing.
 * Light on purpose: the database part (cli-database.ts, the ORM and every entity) is imported only
 * by the commands that use it, so `stellwerk --help` and `version` start fast.
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
