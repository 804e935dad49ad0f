import { describe, expect, it } from 'vitest';
import {
  observe,
  paramsDetail,
  paramsProblem,
  type MonitorParams,
  type MonitorState,
  type MonitorType,
  type Observation,
} from './monitoring-conditions.js';

const fresh = (): MonitorState => ({ samples: [], transitions: [], firing: false });

/** Feeds observations in order; returns whether the condition held after each. */
function run(
  type: MonitorType,
  p: MonitorParams,
  observations: Array<Partial<Observation> & { now: number }>,
) {
  let state = fresh();
  return observations.map((o) => {
    const v = observe(type, p, state, {
      packetsIn: 0,
      packetsFailed: 0,
      lastPacketAt: null,
      status: 'active',
      watchingSince: 0,
      ...o,
    });
    state = v.state;
    return v.holds;
  });
}

describe('connector monitoring conditions', () => {
  it('packet threshold counts counter differences over the window', () => {
    const p = { windowSeconds: 60, threshold: 10 };
    expect(
      run('packet-threshold', p, [
        { now: 0, packetsIn: 100 },
        { now: 30_000, packetsIn: 105 },
        { now: 60_000, packetsIn: 111 },
        { now: 130_000, packetsIn: 112 },
      ]),
    ).toEqual([false, false, true, false]);
    // below: only once a whole window was observed
    expect(
      run('packet-threshold', { ...p, comparison: 'below' }, [{ now: 0 }, { now: 30_000 }, { now: 60_000 }]),
    ).toEqual([false, false, true]);
  });

  it('failed-packet threshold, status duration, count, change and no data', () => {
    expect(
      run('failed-packet-threshold', { windowSeconds: 60, threshold: 2 }, [
        { now: 0 },
        { now: 10_000, packetsFailed: 2 },
      ]),
    ).toEqual([false, true]);
    expect(
      run('status-duration', { status: 'disconnected', durationSeconds: 60 }, [
        { now: 0, status: 'connected' },
        { now: 10_000, status: 'disconnected' },
        { now: 69_000, status: 'disconnected' },
        { now: 71_000, status: 'disconnected' },
      ]),
    ).toEqual([false, false, false, true]);
    expect(
      run('status-count', { status: 'disconnected', windowSeconds: 300, threshold: 2 }, [
        { now: 0, status: 'connected' },
        { now: 1000, status: 'disconnected' },
        { now: 2000, status: 'connected' },
        { now: 3000, status: 'disconnected' },
      ]),
    ).toEqual([false, false, false, true]);
    expect(
      run('status-change', { windowSeconds: 60, threshold: 3 }, [
        { now: 0, status: 'active' },
        { now: 1000, status: 'inactive' },
        { now: 2000, status: 'active' },
        { now: 3000, status: 'inactive' },
        { now: 100_000, status: 'inactive' },
      ]),
    ).toEqual([false, false, false, true, false]);
    expect(
      run('no-data', { windowSeconds: 60 }, [
        { now: 30_000 },
        { now: 61_000 },
        { now: 62_000, lastPacketAt: 61_500 },
      ]),
    ).toEqual([false, true, false]);
  });

  it('names missing parameters per type', () => {
    expect(paramsProblem('status-count', { windowSeconds: 1, threshold: 1 })).toMatch(/status/);
    expect(paramsProblem('no-data', {})).toMatch(/windowSeconds/);
    expect(paramsProblem('packet-threshold', { windowSeconds: 1, threshold: 1.5 })).toMatch(/integer/);
    expect(paramsProblem('status-duration', { status: 'inactive', durationSeconds: 5 })).toBeUndefined();
  });

  it('puts each parameter problem at its field; an emptied number (null) is required', () => {
    const of = (type: MonitorType, p: Record<string, unknown>) => {
      const found = paramsDetail(type, p);
      return found && [found.path, found.keyword, found.params];
    };
    expect(of('no-data', { windowSeconds: null })).toEqual([
      '/params/windowSeconds',
      'required',
      { missingProperty: 'windowSeconds' },
    ]);
    expect(of('no-data', { windowSeconds: 0 })).toEqual([
      '/params/windowSeconds',
      'exclusiveMinimum',
      { comparison: '>', limit: 0 },
    ]);
    expect(of('packet-threshold', { windowSeconds: 60, threshold: 1.5 })).toEqual([
      '/params/threshold',
      'type',
      { type: 'integer' },
    ]);
    expect(of('packet-threshold', { windowSeconds: 60, threshold: -1 })).toEqual([
      '/params/threshold',
      'minimum',
      { comparison: '>=', limit: 0 },
    ]);
    expect(of('status-count', { status: 'asleep', windowSeconds: 60, threshold: 1 })).toEqual([
      '/params/status',
      'enum',
      { allowedValues: ['active', 'inactive', 'connected', 'disconnected'] },
    ]);
    expect(paramsDetail('no-data', {})?.message).toBe('params.windowSeconds must be a number > 0');
  });
});
