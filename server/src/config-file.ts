import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from './config-values.js';

/**
 * `<data dir>/stellwerk.conf`: settings as `KEY=value` lines with the names of the environment
 * variables. `#` starts a comment line (not a comment after a value: passwords may contain `#`);
 * blank lines are skipped; a value may be wrapped in double quotes (`\"` and `\\` inside) or single
 * quotes (taken literally). A line that is not a setting, an unknown name or a name set twice is a
 * ConfigError naming the file and line, so a typo never silently falls back to a default.
 */

export const SETTINGS_FILE_NAME = 'stellwerk.conf';

/** Read from the environment only: the file lives inside it. */
export const ENVIRONMENT_ONLY = 'STELLWERK_DATA_DIR';

export interface SettingsFileValue {
  value: string;
  line: number;
}

export interface SettingsFile {
  path: string;
  found: boolean;
  values: Map<string, SettingsFileValue>;
}

const SETTING = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/;

export function settingsFilePath(dataDir: string): string {
  return path.join(dataDir, SETTINGS_FILE_NAME);
}

/** Reads the file if it exists; throws ConfigError when it cannot be read or has a bad line. */
export function readSettingsFile(file: string, known: ReadonlySet<string>): SettingsFile {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ENOTDIR: the data directory's path runs through a file; the data directory check says so.
    if (code === 'ENOENT' || code === 'ENOTDIR') return { path: file, found: false, values: new Map() };
    throw new ConfigError(file, `cannot be read (${code ?? String(error)})`);
  }
  return { path: file, found: true, values: parseSettings(text, file, known) };
}

export function parseSettings(
  text: string,
  file: string,
  known: ReadonlySet<string>,
): Map<string, SettingsFileValue> {
  const values = new Map<string, SettingsFileValue>();
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = index + 1;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const where = `${file} line ${line}`;
    const match = SETTING.exec(trimmed);
    if (!match) throw new ConfigError(where, 'is not a setting: write NAME=value, or # for a comment');
    const [, name, rawValue] = match as unknown as [string, string, string];
    if (name === ENVIRONMENT_ONLY) {
      throw new ConfigError(
        where,
        `sets ${name}, which only the environment can set: this file is read from inside the data directory`,
      );
    }
    if (!known.has(name)) {
      throw new ConfigError(
        where,
        `sets ${name}, which is not a Stellwerk setting (the names are those of the environment variables in the README)`,
      );
    }
    const earlier = values.get(name);
    if (earlier) throw new ConfigError(where, `sets ${name} again (first set on line ${earlier.line})`);
    values.set(name, { value: unquote(rawValue.trim(), where), line });
  }
  return values;
}

function unquote(value: string, where: string): string {
  const quote = value[0];
  if (quote !== '"' && quote !== "'") return value;
  if (value.length < 2 || value[value.length - 1] !== quote) {
    throw new ConfigError(where, `has a value that opens a ${quote} quote and does not close it`);
  }
  const inner = value.slice(1, -1);
  return quote === "'" ? inner : inner.replace(/\\(["\\])/g, '$1');
}
