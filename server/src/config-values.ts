import os from 'node:os';
import path from 'node:path';

/** Parsers for environment values: each names the variable when a value is bad. */

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`Invalid configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

export type Parser<T> = (raw: string, name: string) => T;

export const integer =
  (min: number, max: number): Parser<number> =>
  (raw, name) => {
    if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(name, `must be an integer, got "${raw}"`);
    const value = Number(raw);
    if (value < min || value > max)
      throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
    return value;
  };

export const port = integer(0, 65535);

export const text: Parser<string> = (raw, name) => {
  if (raw.trim() === '') throw new ConfigError(name, 'must not be empty');
  return raw.trim();
};

export const url =
  (protocols: string[]): Parser<string> =>
  (raw, name) => {
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new ConfigError(name, `must be a URL, got "${raw}"`);
    }
    if (!protocols.includes(parsed.protocol)) {
      throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
    }
    return raw.replace(/\/+$/, '');
  };

export const optionalUrl =
  (protocols: string[]): Parser<string | undefined> =>
  (raw, name) =>
    raw.trim() === '' ? undefined : url(protocols)(raw, name);

export const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
export const logLevel: Parser<LogLevel> = (raw, name) => {
  const value = raw.trim().toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(value)) throw new ConfigError(name, `must be one of ${LOG_LEVELS.join(', ')}`);
  return value;
};

export const password: Parser<string | undefined> = (raw, name) => {
  if (raw === '') return undefined;
  if (raw.length < 12) throw new ConfigError(name, 'must be at least 12 characters long');
  return raw;
};

export const email: Parser<string | undefined> = (raw, name) => {
  if (raw.trim() === '') return undefined;
  if (!/^[^\s@]+@[^\s@]+$/.test(raw.trim())) throw new ConfigError(name, `must be an e-mail address`);
  return raw.trim().toLowerCase();
};

export const constant =
  <T>(value: T) =>
  (): T =>
    value;

/** Where a fresh install keeps its data: the service location for root, the user's data folder otherwise. */
export function defaultDataDir(
  env: NodeJS.ProcessEnv = process.env,
  platform = process.platform,
  uid = process.getuid?.(),
): string {
  // win32/posix joins so the result is right for `platform`, whatever machine computes it.
  if (platform === 'win32') return path.win32.join(env.PROGRAMDATA ?? 'C:\\ProgramData', 'Stellwerk');
  if (platform === 'darwin')
    return path.posix.join(os.homedir(), 'Library', 'Application Support', 'Stellwerk');
  // As root the embedded PostgreSQL runs as the `postgres` user, which cannot enter /root.
  if (uid === 0) return '/var/lib/stellwerk';
  return path.posix.join(env.XDG_DATA_HOME ?? path.posix.join(os.homedir(), '.local', 'share'), 'stellwerk');
}
