import type { Connector } from '../../connector.entity.js';
import type { ConfigProblem } from '../../connector-kind.js';
import { ConfigCheck } from '../config-fields.js';
import { flag, integer, settingsObject, text } from '../settings-fields.js';
import { parsePoints, PointListError, type PointList } from './points.js';

/** Settings of an iec104 connector as stored. Timers in seconds (IEC 60870-5-104, 5.5 and 9.6). */
export interface Iec104Config {
  host: string;
  port?: number;
  commonAddress?: number;
  originatorAddress?: number;
  k?: number;
  w?: number;
  t0?: number;
  t1?: number;
  t2?: number;
  t3?: number;
  interrogationIntervalSeconds?: number;
  clockSync?: boolean;
  selectBeforeOperate?: boolean;
  points?: string;
}

export interface Iec104Settings {
  host: string;
  port: number;
  commonAddress: number;
  originator: number;
  k: number;
  w: number;
  t0: number;
  t1: number;
  t2: number;
  t3: number;
  interrogationIntervalSeconds: number;
  clockSync: boolean;
  selectBeforeOperate: boolean;
  points: PointList;
}

export const DEFAULTS = {
  port: 2404,
  commonAddress: 1,
  k: 12,
  w: 8,
  t0: 30,
  t1: 15,
  t2: 10,
  t3: 20,
} as const;
const MAX_POINTS_TEXT = 500_000;

export const iec104Settings = settingsObject(
  {
    host: text(253, 'Host name or IP address of the outstation'),
    port: integer(1, 65_535, 'TCP port (default 2404)'),
    commonAddress: integer(
      1,
      65_534,
      'Common address of ASDU used for interrogation, clock sync and rows without ca (default 1)',
    ),
    originatorAddress: integer(0, 255, 'Originator address sent in the cause of transmission (default 0)'),
    k: integer(1, 32_767, 'Unacknowledged I-frames we send at most (default 12)'),
    w: integer(1, 32_767, 'Received I-frames acknowledged at latest after this many (default 8)'),
    t0: integer(1, 255, 'Seconds to establish the connection (default 30)'),
    t1: integer(1, 255, 'Seconds to wait for an acknowledgement or confirmation (default 15)'),
    t2: integer(1, 255, 'Seconds after which received I-frames are acknowledged (default 10; below t1)'),
    t3: integer(1, 172_800, 'Seconds of silence before a TESTFR (default 20)'),
    interrogationIntervalSeconds: integer(
      0,
      86_400,
      'General interrogation every this many seconds besides after each start (0: only after start)',
    ),
    clockSync: flag('Send clock synchronisation after each start (default true)'),
    selectBeforeOperate: flag('Commands select first, then execute (default true)'),
    points: text(
      MAX_POINTS_TEXT,
      'Point list as CSV: header ioa,device_id,state[,type,scale,ca]; see docs/connectors/iec104.md',
    ),
  },
  ['host'],
);

/** Rules the schema cannot say: host form, t2 below t1, w not above k, the point list's rows. */
export function checkIec104(config: Record<string, unknown>): ConfigProblem[] {
  const check = new ConfigCheck(config);
  if (typeof config.host === 'string' && !/^[A-Za-z0-9.:[\]_-]{1,253}$/.test(config.host))
    check.problem('host', 'format', { format: 'host' }, 'must be a host name or an IP address');
  const t1 = typeof config.t1 === 'number' ? config.t1 : DEFAULTS.t1;
  const t2 = typeof config.t2 === 'number' ? config.t2 : DEFAULTS.t2;
  if (t2 >= t1) check.problem('t2', 'exclusiveMaximum', { limit: t1 }, 'must be less than t1');
  const k = typeof config.k === 'number' ? config.k : DEFAULTS.k;
  const w = typeof config.w === 'number' ? config.w : DEFAULTS.w;
  if (w > k) check.problem('w', 'maximum', { limit: k }, 'must not be more than k');
  if (typeof config.points === 'string') {
    try {
      parsePoints(config.points, commonAddressOf(config));
    } catch (error) {
      if (!(error instanceof PointListError)) throw error;
      check.custom('points', error.message);
    }
  }
  return check.problems;
}

const commonAddressOf = (config: Record<string, unknown>) =>
  typeof config.commonAddress === 'number' ? config.commonAddress : DEFAULTS.commonAddress;

/** The stored settings with their defaults; the point list was checked when they were saved. */
export function settingsOf(connector: Connector): Iec104Settings {
  const c = connector.config as unknown as Iec104Config;
  const commonAddress = c.commonAddress ?? DEFAULTS.commonAddress;
  return {
    host: c.host,
    port: c.port ?? DEFAULTS.port,
    commonAddress,
    originator: c.originatorAddress ?? 0,
    k: c.k ?? DEFAULTS.k,
    w: c.w ?? DEFAULTS.w,
    t0: c.t0 ?? DEFAULTS.t0,
    t1: c.t1 ?? DEFAULTS.t1,
    t2: c.t2 ?? DEFAULTS.t2,
    t3: c.t3 ?? DEFAULTS.t3,
    interrogationIntervalSeconds: c.interrogationIntervalSeconds ?? 0,
    clockSync: c.clockSync ?? true,
    selectBeforeOperate: c.selectBeforeOperate ?? true,
    points: parsePoints(c.points ?? '', commonAddress),
  };
}
