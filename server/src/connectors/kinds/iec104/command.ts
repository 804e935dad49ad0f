import type { Point, PointList } from './points.js';

/**
 * A downlink to a device on an iec104 connector is a small JSON document naming one of the
 * device's command points and the state to command:
 *   {"state": "breaker", "value": "on"}      or   {"ioa": 6001, "value": true}
 * `value`: true/false, 1/0 or "on"/"off"; `select` (optional) overrides the connector's
 * select-before-operate. Only points of type single-command or double-command of this device can
 * be commanded.
 */
export interface Iec104Command {
  point: Point;
  on: boolean;
  select?: boolean;
}

export class CommandError extends Error {
  constructor(message: string) {
    super(`IEC 104 command: ${message}`);
    this.name = 'CommandError';
  }
}

const ON = new Map<unknown, boolean>([
  [true, true],
  [false, false],
  [1, true],
  [0, false],
  ['on', true],
  ['off', false],
]);

export function parseCommand(bytes: Buffer, deviceKey: string, points: PointList): Iec104Command {
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new CommandError(
      'the downlink bytes must be a JSON document such as {"state":"breaker","value":"on"}',
    );
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new CommandError('the downlink must be a JSON object with "state" or "ioa" and "value"');
  const { state, ioa, value, select } = doc as Record<string, unknown>;
  const on = ON.get(typeof value === 'string' ? value.toLowerCase() : value);
  if (on === undefined) throw new CommandError('"value" must be true, false, 1, 0, "on" or "off"');
  if (select !== undefined && typeof select !== 'boolean')
    throw new CommandError('"select" must be true or false');
  const mine = points.commands.filter((p) => p.deviceId === deviceKey);
  let point: Point | undefined;
  if (typeof state === 'string') point = mine.find((p) => p.state === state);
  else if (typeof ioa === 'number') point = mine.find((p) => p.ioa === ioa);
  else throw new CommandError('name the point with "state" (its state in the point list) or "ioa"');
  if (!point)
    throw new CommandError(
      `device ${deviceKey} has no command point ${typeof state === 'string' ? `"${state}"` : `at IOA ${String(ioa)}`} in the point list`,
    );
  return { point, on, ...(select !== undefined ? { select } : {}) };
}
