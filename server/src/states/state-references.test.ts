import { describe, expect, it } from 'vitest';
import { findCycle, type StateRef } from './state-references.js';
import type { StateSource } from './state-source.js';

const ref = (id: string): StateRef => ({ id, key: id, twinId: 't' });
const sum = (...stateIds: string[]): StateSource => ({ type: 'aggregate', operation: 'sum', stateIds });

/** A graph of existing states by id → source, loaded the way the service loads rows. */
const loader = (graph: Record<string, StateSource | null>) => async (ids: string[]) =>
  new Map(ids.filter((id) => id in graph).map((id) => [id, { ...ref(id), source: graph[id]! }]));

describe('aggregation cycles', () => {
  it('finds self references, direct and indirect cycles through every aggregating source type', async () => {
    expect(await findCycle(ref('a'), ['a'], loader({}))).toEqual([ref('a'), ref('a')]);
    expect(await findCycle(ref('a'), ['b'], loader({ b: sum('a') }))).toEqual([ref('a'), ref('b'), ref('a')]);
    const graph = {
      b: { type: 'time-aggregated', stateId: 'c', operation: 'sum', period: 'day' } as StateSource,
      c: {
        type: 'timeseries-aggregate',
        stateId: 'd',
        operation: 'max',
        windowSeconds: 60,
        intervalSeconds: 60,
      } as StateSource,
      d: sum('x', 'a'),
    };
    expect((await findCycle(ref('a'), ['b'], loader(graph)))!.map((s) => s.id)).toEqual([
      'a',
      'b',
      'c',
      'd',
      'a',
    ]);
  });

  it('accepts diamonds and chains without a way back', async () => {
    const graph = { b: sum('d'), c: sum('d'), d: null, e: sum('b', 'c') };
    expect(await findCycle(ref('a'), ['b', 'c', 'e'], loader(graph))).toBeNull();
  });
});
