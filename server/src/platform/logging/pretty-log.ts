/**
 * Readable log lines for a terminal, from pino's JSON lines: a pino destination stream that
 * reformats each line and writes it on. `10:04:05.123 INFO  message  key=value …`, an error's stack
 * indented below, and large objects (the effective configuration) as an indented block. Small and
 * in-repo: pino-pretty is a development dependency elsewhere, and a packaged server has none.
 */

const LEVELS: Record<number, { label: string; color: string }> = {
  10: { label: 'TRACE', color: '90' },
  20: { label: 'DEBUG', color: '90' },
  30: { label: 'INFO ', color: '32' },
  40: { label: 'WARN ', color: '33' },
  50: { label: 'ERROR', color: '31' },
  60: { label: 'FATAL', color: '35' },
};

/** Fields every line has, shown in the line's head or not at all (`node` is the same on every line). */
const HEAD_FIELDS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'node', 'v']);
/** Objects longer than this (as JSON) get a block of their own below the line. */
const INLINE_LIMIT = 100;

export interface PrettyOptions {
  colors: boolean;
}

/** One JSON log line as readable text (with its trailing newline); other text passes unchanged. */
export function formatLogLine(line: string, options: PrettyOptions): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  if (entry === null || typeof entry !== 'object') return `${line.trimEnd()}\n`;
  const paint = (code: string, text: string) => (options.colors ? `\x1b[${code}m${text}\x1b[0m` : text);
  const level = LEVELS[entry.level as number] ?? { label: String(entry.level).padEnd(5), color: '0' };
  const head = `${paint('90', clock(entry.time))} ${paint(level.color, level.label)} ${scalar(entry.msg ?? '')}`;

  const inline: string[] = [];
  const blocks: string[] = [];
  for (const [key, value] of Object.entries(entry)) {
    if (HEAD_FIELDS.has(key) || value === undefined) continue;
    if (key === 'err' && isErrorLike(value)) {
      inline.push(`${paint('36', 'err')}=${quoteIfNeeded(value.message ?? value.type ?? 'error')}`);
      if (typeof value.stack === 'string') blocks.push(indent(stackLines(value.stack), '    '));
      continue;
    }
    const json = typeof value === 'object' && value !== null ? JSON.stringify(value) : undefined;
    if (json !== undefined && json.length > INLINE_LIMIT) {
      blocks.push(`    ${paint('36', key)}:\n${block(value, '      ')}`);
    } else {
      inline.push(`${paint('36', key)}=${json ?? quoteIfNeeded(scalar(value))}`);
    }
  }
  const first = inline.length ? `${head}  ${inline.join(' ')}` : head;
  return [first, ...blocks].join('\n') + '\n';
}

/** A pino destination: whole lines in, readable lines out to `target`. */
export function prettyStream(
  target: { write(text: string): unknown },
  options: PrettyOptions,
): { write(chunk: string): void } {
  let rest = '';
  return {
    write(chunk: string) {
      const text = rest + chunk;
      const lines = text.split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') target.write(formatLogLine(line, options));
    },
  };
}

function clock(time: unknown): string {
  const date = typeof time === 'number' || typeof time === 'string' ? new Date(time) : new Date();
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

function isErrorLike(value: unknown): value is { message?: string; type?: string; stack?: unknown } {
  return typeof value === 'object' && value !== null && ('message' in value || 'stack' in value);
}

/** The stack without its first line, which repeats the message shown already. */
function stackLines(stack: string): string {
  const lines = stack.split('\n');
  return (/^\s+at /.test(lines[0] ?? '') ? lines : lines.slice(1)).map((l) => l.trim()).join('\n');
}

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((l) => prefix + l)
    .join('\n');
}

/** An object as `key: value` lines; nested objects one level further in. */
function block(value: unknown, prefix: string): string {
  if (Array.isArray(value)) return value.map((item) => `${prefix}- ${scalar(item)}`).join('\n');
  return Object.entries(value as Record<string, unknown>)
    .map(([key, item]) =>
      item !== null && typeof item === 'object' && JSON.stringify(item).length > INLINE_LIMIT
        ? `${prefix}${key}:\n${block(item, `${prefix}  `)}`
        : `${prefix}${key}: ${scalar(item)}`,
    )
    .join('\n');
}

function scalar(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return value === undefined ? 'undefined' : JSON.stringify(value);
}

function quoteIfNeeded(text: string): string {
  return /^[^\s"=]+$/.test(text) ? text : JSON.stringify(text);
}
