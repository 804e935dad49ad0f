import { describe, expect, it } from 'vitest';
import type { StateValueType } from '../data-state.entity.js';
import type { StateSource } from '../state-source.js';
import { RoutingIndex, type StateDefinition } from './routing-index.js';
import { StateWork, type StateRow } from './state-work.js';

const ACCOUNT = 'acc-1';
let next = 0;

function def(
  key: string,
  source: StateSource | null,
  o: { valueType?: StateValueType; referenceId?: string | null; accountId?: string; timeZone?: string } = {},
): StateDefinition {
  return {
    id: `s-${key}-${next++}`,
    twinId: 'twin-1',
    accountId: o.accountId ?? ACCOUNT,
    key,
    valueType: o.valueType ?? 'number',
    source,
    timeZone: o.timeZone ?? 'UTC',
    referenceId: o.referenceId === undefined ? 'ref-1' : o.referenceId,
  };
}

function world(defs: StateDefinition[]) {
  const index = new RoutingIndex(defs);
  const rows = new Map<string, StateRow>(
    defs.map((d) => [d.id, { id: d.id, value: null, timestamp: null, warning: null, engine: {} }]),
  );
  return { index, rows, work: () => new StateWork(index, rows) };
}

const t = (iso: string) => new Date(iso);

describe('routing index', () => {
  it('routes by device uuid (connector, hub) and by referenceId within the same account only', () => {
    const a = def('flow', { type: 'connector', connectorId: 'c', deviceId: 'dev-1', stateKey: 'flow' });
    const h = def('hub', { type: 'hub', deviceId: 'dev-1', stateKey: 'temp' });
    const d = def('level', { type: 'dynamic-routing', stateKey: 'level' });
    const noRef = def('x', { type: 'dynamic-routing', stateKey: 'x' }, { referenceId: null });
    const index = new RoutingIndex([a, h, d, noRef]);
    expect(index.routedCount).toBe(3);
    const same = index.routesOf({ deviceId: 'dev-1', accountId: ACCOUNT, referenceId: 'ref-1' });
    expect(same.map((r) => Object.fromEntries(r))).toEqual([
      { flow: [a.id], temp: [h.id] },
      { level: [d.id] },
    ]);
    expect(index.routesOf({ deviceId: 'dev-2', accountId: 'other', referenceId: 'ref-1' })).toEqual([]);
  });

  it('orders dependents topologically and leaves cycles unranked', () => {
    const a = def('a', null);
    const b = def('b', null);
    const sum = def('sum', { type: 'aggregate', operation: 'sum', stateIds: [a.id, b.id] });
    const twice = def('twice', { type: 'aggregate', operation: 'sum', stateIds: [sum.id, a.id] });
    const daily = def('daily', {
      type: 'time-aggregated',
      stateId: twice.id,
      operation: 'sum',
      period: 'day',
    });
    const c1 = def('c1', { type: 'aggregate', operation: 'sum', stateIds: [] });
    const c2 = def('c2', { type: 'aggregate', operation: 'sum', stateIds: [c1.id] });
    (c1.source as { stateIds: string[] }).stateIds.push(c2.id);
    const index = new RoutingIndex([daily, twice, c1, sum, b, a, c2]);
    expect(index.downstream(a.id)).toEqual([sum.id, twice.id, daily.id]);
    expect(index.downstream(b.id)).toEqual([sum.id, twice.id, daily.id]);
    expect(index.unranked.sort()).toEqual([c1.id, c2.id].sort());
    expect(index.downstream(c1.id)).toEqual([]);
    // What a change of b touches: b, its dependents, and their sources (a).
    expect(new Set(index.closure([b.id]))).toEqual(new Set([b.id, sum.id, twice.id, daily.id, a.id]));
  });
});

describe('state work', () => {
  it('a received value changes the state, its aggregates and time aggregates, one point per change', () => {
    const a = def('a', { type: 'dynamic-routing', stateKey: 'a' });
    const b = def('b', null);
    const sum = def('sum', { type: 'aggregate', operation: 'sum', stateIds: [a.id, b.id] });
    const count = def('count', { type: 'time-aggregated', stateId: a.id, operation: 'count', period: 'day' });
    const daySum = def('daySum', {
      type: 'time-aggregated',
      stateId: sum.id,
      operation: 'sum',
      period: 'day',
    });
    const w = world([a, b, sum, count, daySum]);
    w.rows.get(b.id)!.value = 10;
    const work = w.work();
    expect(
      work.apply({ stateId: a.id, kind: 'receive', value: 5, time: t('2026-05-01T10:00:00Z'), seq: [7n, 0] }),
    ).toBe(true);
    // Topological order: a first, daySum after sum; count and sum in either order.
    const order = work.changes.map((c) => c.key);
    expect(order[0]).toBe('a');
    expect(order.indexOf('daySum')).toBeGreaterThan(order.indexOf('sum'));
    expect(Object.fromEntries(work.changes.map((c) => [c.key, c.value]))).toEqual({
      a: 5,
      sum: 15,
      count: 1,
      daySum: 15,
    });
    // The same value again: a stays (no point) but the receipt counts.
    expect(
      work.apply({ stateId: a.id, kind: 'receive', value: 5, time: t('2026-05-01T11:00:00Z'), seq: [8n, 0] }),
    ).toBe(false);
    expect(work.changes.slice(4).map((c) => [c.key, c.value])).toEqual([['count', 2]]);
    expect(w.rows.get(a.id)!.timestamp).toEqual(t('2026-05-01T10:00:00Z'));
    expect(work.points().map((p) => [p.stateKey, p.value, p.text])).toEqual(
      work.changes.map((c) => [c.key, c.value, null]),
    );
    expect(work.points()).toHaveLength(5);
    expect(new Set(work.dirtyRows().map((r) => r.id))).toEqual(new Set([a.id, sum.id, count.id, daySum.id]));
  });

  it('keys of one device update are applied together: an aggregate over them takes no value in between', () => {
    const a = def('a', { type: 'dynamic-routing', stateKey: 'a' });
    const b = def('b', { type: 'dynamic-routing', stateKey: 'b' });
    const sum = def('sum', { type: 'aggregate', operation: 'sum', stateIds: [a.id, b.id] });
    const sums = def('sums', { type: 'time-aggregated', stateId: sum.id, operation: 'count', period: 'day' });
    const w = world([a, b, sum, sums]);
    const work = w.work();
    const at = t('2026-05-01T10:00:00Z');
    expect(
      work.applyTogether([
        { stateId: a.id, kind: 'receive', value: 2.5, time: at, seq: [9n, 0] },
        { stateId: b.id, kind: 'receive', value: 1, time: at, seq: [9n, 0] },
      ]),
    ).toEqual([true, true]);
    expect(work.changes.map((c) => [c.key, c.value])).toEqual([
      ['a', 2.5],
      ['b', 1],
      ['sum', 3.5],
      ['sums', 1],
    ]);
  });

  it('marks the own change of a value shown on arrival, not the changes derived from it', () => {
    const a = def('a', { type: 'dynamic-routing', stateKey: 'a' });
    const b = def('b', { type: 'dynamic-routing', stateKey: 'b' });
    const sum = def('sum', { type: 'aggregate', operation: 'sum', stateIds: [a.id, b.id] });
    const w = world([a, b, sum]);
    const work = w.work();
    const at = t('2026-05-01T10:00:00Z');
    work.apply({ stateId: a.id, kind: 'receive', value: 2, time: at, seq: [9n, 0], shownLive: true });
    work.apply({ stateId: b.id, kind: 'receive', value: 3, time: at, seq: [10n, 0] });
    expect(work.changes.map((c) => [c.key, c.value, c.shownLive])).toEqual([
      ['a', 2, true],
      ['sum', 2, undefined],
      ['b', 3, undefined],
      ['sum', 5, undefined],
    ]);
  });

  it('a replayed packet (at or below the last one taken) changes nothing', () => {
    const a = def('a', { type: 'dynamic-routing', stateKey: 'a' });
    const count = def('count', { type: 'time-aggregated', stateId: a.id, operation: 'count', period: 'day' });
    const w = world([a, count]);
    const first = w.work();
    first.apply({ stateId: a.id, kind: 'receive', value: 1, time: t('2026-05-01T10:00:00Z'), seq: [5n, 0] });
    first.apply({ stateId: a.id, kind: 'receive', value: 2, time: t('2026-05-01T10:00:00Z'), seq: [5n, 1] });
    expect(w.rows.get(count.id)!.value).toBe(2);
    const replay = w.work();
    for (const [seq, value] of [
      [[5n, 0], 1],
      [[5n, 1], 2],
      [[4n, 0], 9],
    ] as const)
      replay.apply({ stateId: a.id, kind: 'receive', value, time: t('2026-05-01T10:00:00Z'), seq });
    expect(replay.changes).toEqual([]);
    expect(replay.dirtyRows()).toEqual([]);
    expect([w.rows.get(a.id)!.value, w.rows.get(count.id)!.value]).toEqual([2, 2]);
  });

  it('difference of the two most recently received values; set events only fire on change', () => {
    const a = def('a', null);
    const diff = def('diff', { type: 'aggregate', operation: 'difference', stateIds: [a.id] });
    const w = world([a, diff]);
    const work = w.work();
    const set = (value: unknown) =>
      work.apply({ stateId: a.id, kind: 'set', value, time: t('2026-05-01T10:00:00Z') });
    expect(set(100)).toBe(true);
    expect(w.rows.get(diff.id)!.value).toBeNull();
    set(130);
    expect(w.rows.get(diff.id)!.value).toBe(30);
    expect(set(130)).toBe(false);
    set(125);
    expect(w.rows.get(diff.id)!.value).toBe(-5);
    expect(w.rows.get(diff.id)!.engine.recent).toEqual([130, 125]);
  });

  it('a start value (unlessNewer) yields to a value of its time or later, and fills an empty state', () => {
    const a = def('a', { type: 'dynamic-routing', stateKey: 'a' });
    const w = world([a]);
    const work = w.work();
    const start = (value: number, iso: string) =>
      work.apply({ stateId: a.id, kind: 'set', value, time: t(iso), unlessNewer: true });
    expect(start(1, '2026-05-01T10:00:00Z')).toBe(true);
    work.apply({ stateId: a.id, kind: 'set', value: 2, time: t('2026-05-01T10:00:05Z') });
    expect(start(3, '2026-05-01T10:00:04Z')).toBe(false);
    expect(start(3, '2026-05-01T10:00:05Z')).toBe(false);
    expect(w.rows.get(a.id)!.value).toBe(2);
  });

  it('mean, min, max and count over current values', () => {
    const [a, b, c] = [def('a', null), def('b', null), def('c', null)];
    const ops = (['mean', 'min', 'max', 'count'] as const).map((operation) =>
      def(operation, { type: 'aggregate', operation, stateIds: [a.id, b.id, c.id] }),
    );
    const w = world([a, b, c, ...ops]);
    const work = w.work();
    work.apply({ stateId: a.id, kind: 'set', value: 3, time: t('2026-05-01T10:00:00Z') });
    work.apply({ stateId: b.id, kind: 'set', value: true, time: t('2026-05-01T10:00:00Z') });
    expect(ops.map((o) => w.rows.get(o.id)!.value)).toEqual([2, 1, 3, 2]);
  });

  it('warns when a value does not fit its type; points keep booleans as 1/0 and strings as text', () => {
    const flag = def('flag', null, { valueType: 'boolean' });
    const label = def('label', null, { valueType: 'string' });
    const w = world([flag, label]);
    const work = w.work();
    work.apply({ stateId: flag.id, kind: 'set', value: true, time: t('2026-05-01T10:00:00Z') });
    work.apply({ stateId: label.id, kind: 'set', value: 'open', time: t('2026-05-01T10:00:00Z') });
    work.apply({ stateId: flag.id, kind: 'set', value: 'yes', time: t('2026-05-01T10:00:01Z') });
    expect(work.points().map((p) => [p.value, p.text])).toEqual([
      [1, null],
      [null, 'open'],
      [null, 'yes'],
    ]);
    expect(w.rows.get(flag.id)!.warning).toBe('value "yes" does not fit value type boolean');
    expect(w.rows.get(label.id)!.warning).toBeNull();
  });

  it('a tick rolls a period over at its end: count 0, the previous day takes the completed one', () => {
    const a = def('a', null);
    const count = def('count', { type: 'time-aggregated', stateId: a.id, operation: 'count', period: 'day' });
    const prev = def('prev', {
      type: 'time-aggregated',
      stateId: a.id,
      operation: 'count',
      period: 'previous-day',
    });
    const w = world([a, count, prev]);
    const first = w.work();
    first.apply({ stateId: count.id, kind: 'tick', time: t('2026-05-01T00:00:30Z') });
    first.apply({ stateId: prev.id, kind: 'tick', time: t('2026-05-01T00:00:30Z') });
    // Never null: both start at 0.
    expect([w.rows.get(count.id)!.value, w.rows.get(prev.id)!.value]).toEqual([0, 0]);
    first.apply({ stateId: a.id, kind: 'set', value: 1, time: t('2026-05-01T10:00:00Z') });
    first.apply({ stateId: a.id, kind: 'set', value: 2, time: t('2026-05-01T11:00:00Z') });
    expect([w.rows.get(count.id)!.value, w.rows.get(prev.id)!.value]).toEqual([2, 0]);
    const rollover = w.work();
    rollover.apply({ stateId: count.id, kind: 'tick', time: t('2026-05-02T00:00:01Z') });
    rollover.apply({ stateId: prev.id, kind: 'tick', time: t('2026-05-02T00:00:01Z') });
    expect(rollover.changes.map((c) => [c.key, c.value, c.timestamp.toISOString()])).toEqual([
      ['count', 0, '2026-05-02T00:00:00.000Z'],
      ['prev', 2, '2026-05-02T00:00:00.000Z'],
    ]);
    // A second tick in the same period changes nothing.
    const again = w.work();
    again.apply({ stateId: count.id, kind: 'tick', time: t('2026-05-02T00:00:02Z') });
    expect(again.dirtyRows()).toEqual([]);
  });
});
