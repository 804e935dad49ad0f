import fs from 'node:fs';
import path from 'node:path';

/**
 * `<data dir>/stellwerk.conf`: `KEY=value` lines named like the environment variables, `#`
 * comments and blank lines. The settings window edits a file an admin may also have written by
 * hand, so an update rewrites only the lines of the keys it changes: comments, unknown keys and
 * their order stay as they were. Pure Node, no Electron.
 */

export const CONF_FILE_NAME = 'stellwerk.conf';

const LINE = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$/;

/** A value in matching single or double quotes is taken without them. */
function unquote(raw: string): string {
  const value = raw.trim();
  const quote = value[0];
  if (value.length >= 2 && (quote === '"' || quote === "'") && value.endsWith(quote))
    return value.slice(1, -1);
  return value;
}

function keyOf(line: string): string | undefined {
  if (line.trimStart().startsWith('#')) return undefined;
  return LINE.exec(line)?.[1];
}

/** The settings in the file; a key given twice takes its last value, as a shell would. */
export function parseConf(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    if (line.trimStart().startsWith('#')) continue;
    const match = LINE.exec(line);
    if (match?.[1] !== undefined) values[match[1]] = unquote(match[2] ?? '');
  }
  return values;
}

/** Changes to apply: a string sets the key, `undefined` removes it (the server's default applies). */
export type ConfChanges = Record<string, string | undefined>;

export class ConfValueError extends Error {}

function lineFor(key: string, value: string): string {
  // A line break would smuggle in another setting.
  if (/[\r\n]/.test(value)) throw new ConfValueError(`${key} must be a single line`);
  // Quoted when the value would otherwise lose its edges or read as a comment.
  const needsQuotes = value !== value.trim() || value.startsWith('#') || /^["']/.test(value);
  return `${key}=${needsQuotes ? `"${value}"` : value}`;
}

/**
 * The file's text with `changes` applied. A changed key keeps the place of its first line
 * (further lines of the same key are dropped, so the file says one thing); new keys are
 * appended. Everything else, including the line-ending style, is kept.
 */
export function updateConf(text: string, changes: ConfChanges): string {
  const newline = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text === '' ? [] : text.split(/\r?\n/);
  // The final newline splits into a trailing empty string; put it back after editing.
  const endsWithNewline = lines.length > 0 && lines[lines.length - 1] === '';
  if (endsWithNewline) lines.pop();

  const written = new Set<string>();
  const out: string[] = [];
  for (const line of lines) {
    const key = keyOf(line);
    if (key === undefined || !Object.hasOwn(changes, key)) {
      out.push(line);
      continue;
    }
    const value = changes[key];
    if (value === undefined || written.has(key)) continue;
    out.push(lineFor(key, value));
    written.add(key);
  }
  for (const [key, value] of Object.entries(changes)) {
    if (value !== undefined && !written.has(key)) out.push(lineFor(key, value));
  }
  return out.length === 0 ? '' : out.join(newline) + newline;
}

export const confPath = (dataDir: string): string => path.join(dataDir, CONF_FILE_NAME);

/** The file's text, or '' when there is none yet. */
export function readConfText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}

/**
 * Applies `changes` to the file and returns the new settings. Written to a temporary file and
 * renamed, so a crash leaves the old or the new file, never half of one; an existing file keeps
 * its permissions, a new one is readable by its owner only (it may name key files).
 */
export function updateConfFile(file: string, changes: ConfChanges): Record<string, string> {
  const before = readConfText(file);
  const after = updateConf(before, changes);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let mode = 0o600;
  try {
    mode = fs.statSync(file).mode & 0o777;
  } catch {
    // No file yet: the owner-only default stands.
  }
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, after, { mode });
  fs.chmodSync(temp, mode);
  fs.renameSync(temp, file);
  return parseConf(after);
}
