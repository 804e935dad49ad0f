import pino, { type Logger } from 'pino';
import type { LogLevel } from '../../config-values.js';
import type { LogFormatSetting } from '../../config-variables.logging.js';
import { loggableError } from '../db/database-errors.js';
import { prettyStream } from './pretty-log.js';

export type LogFormat = 'json' | 'pretty';

/** `auto` follows the output: a terminal gets readable lines, a pipe, file or journal JSON lines. */
export function chooseLogFormat(setting: LogFormatSetting, isTerminal: boolean): LogFormat {
  if (setting === 'auto') return isTerminal ? 'pretty' : 'json';
  return setting;
}

export interface LoggerOptions {
  level: LogLevel;
  format: LogFormatSetting;
  /** Fields on every line (`node`). */
  base?: Record<string, unknown>;
  /** Where lines go: stdout for the server, stderr for the `stellwerk` commands. */
  output?: 'stdout' | 'stderr';
  /** Colors on a pretty terminal unless NO_COLOR is set (https://no-color.org). */
  env?: NodeJS.ProcessEnv;
}

/**
 * The process's logger. JSON lines go to the output as pino writes them; pretty lines pass
 * through the in-repo formatter. Errors under `err` use `loggableError` (no SQL with bound values).
 */
export function createLogger(options: LoggerOptions): Logger {
  const output = options.output === 'stderr' ? process.stderr : process.stdout;
  const format = chooseLogFormat(options.format, output.isTTY === true);
  const pinoOptions = {
    level: options.level,
    base: options.base ?? {},
    serializers: { err: loggableError },
  };
  if (format === 'pretty') {
    const colors = output.isTTY === true && (options.env ?? process.env).NO_COLOR === undefined;
    return pino(pinoOptions, prettyStream(output, { colors }));
  }
  return options.output === 'stderr' ? pino(pinoOptions, pino.destination(2)) : pino(pinoOptions);
}
