import type { Family } from './asdu.js';

/**
 * The connector's point list: which information object (common address + IOA) is which state of
 * which device. Imported as CSV text in the connector's settings, with a header row naming the
 * columns `ioa,device_id,state` and optionally `type`, `scale`, `ca`; comma or semicolon separated.
 */

export const POINT_TYPES = [
  'single',
  'double',
  'normalized',
  'scaled',
  'float',
  'total',
  'single-command',
  'double-command',
] as const;
export type PointType = (typeof POINT_TYPES)[number];

export const MAX_POINTS = 10_000;

export interface Point {
  ca: number;
  ioa: number;
  deviceId: string;
  state: string;
  /** Absent: whatever monitoring type arrives is taken. */
  type?: PointType;
  scale: number;
}

export interface PointList {
  /** Monitoring points by `ca:ioa`. */
  monitoring: ReadonlyMap<string, Point>;
  commands: readonly Point[];
}

export class PointListError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(line > 0 ? `point list line ${line}: ${message}` : `point list: ${message}`);
    this.name = 'PointListError';
  }
}

export const pointKey = (ca: number, ioa: number) => `${ca}:${ioa}`;

const STATE = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;

/** Parses the CSV; throws PointListError naming the first bad line. */
export function parsePoints(csv: string, defaultCa: number): PointList {
  const lines = csv
    .split(/\r?\n/)
    .map((text, i) => ({ text: text.trim(), line: i + 1 }))
    .filter((l) => l.text !== '' && !l.text.startsWith('#'));
  if (lines.length === 0) return { monitoring: new Map(), commands: [] };
  const separator = lines[0]!.text.includes(';') ? ';' : ',';
  const cells = (text: string) => text.split(separator).map((c) => c.trim().replace(/^"(.*)"$/, '$1'));
  const columns = cells(lines[0]!.text).map((c) => c.toLowerCase());
  for (const required of ['ioa', 'device_id', 'state'])
    if (!columns.includes(required))
      throw new PointListError(lines[0]!.line, `the header needs the columns ioa, device_id and state`);
  if (lines.length - 1 > MAX_POINTS) throw new PointListError(0, `at most ${MAX_POINTS} points`);
  const monitoring = new Map<string, Point>();
  const commands: Point[] = [];
  const commandKeys = new Set<string>();
  for (const { text, line } of lines.slice(1)) {
    const row = Object.fromEntries(cells(text).map((value, i) => [columns[i] ?? `extra${i}`, value]));
    const ioa = integerCell(row.ioa, 'ioa', 0, 0xffffff, line);
    const ca = row.ca ? integerCell(row.ca, 'ca', 1, 0xffff, line) : defaultCa;
    const deviceId = row.device_id ?? '';
    if (deviceId === '' || deviceId.length > 200)
      throw new PointListError(line, 'device_id must be 1 to 200 characters');
    const state = row.state ?? '';
    if (!STATE.test(state))
      throw new PointListError(
        line,
        'state must be 1 to 100 letters, digits, _ . - (not starting with . or -)',
      );
    const type = row.type ? (row.type.toLowerCase() as PointType) : undefined;
    if (type !== undefined && !POINT_TYPES.includes(type))
      throw new PointListError(line, `type must be one of ${POINT_TYPES.join(', ')}`);
    const scale = row.scale ? Number(row.scale.replace(',', '.')) : 1;
    if (!Number.isFinite(scale)) throw new PointListError(line, 'scale must be a number');
    const point: Point = { ca, ioa, deviceId, state, scale, ...(type ? { type } : {}) };
    const key = pointKey(ca, ioa);
    if (type === 'single-command' || type === 'double-command') {
      if (commandKeys.has(key)) throw new PointListError(line, `command address ${key} is listed twice`);
      commandKeys.add(key);
      commands.push(point);
    } else {
      if (monitoring.has(key)) throw new PointListError(line, `address ${key} is listed twice`);
      monitoring.set(key, point);
    }
  }
  return { monitoring, commands };
}

function integerCell(
  value: string | undefined,
  name: string,
  min: number,
  max: number,
  line: number,
): number {
  const n = value !== undefined && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max)
    throw new PointListError(line, `${name} must be an integer from ${min} to ${max}`);
  return n;
}

/** Whether a monitoring value of `family` may be stored under `point` (a point without type takes any). */
export const fits = (point: Point, family: Family) => point.type === undefined || point.type === family;
