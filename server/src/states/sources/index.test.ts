import { describe, expect, it } from 'vitest';
import { sourceStateIds } from '../state-source.js';
import { AGGREGATING_SOURCE_TYPES } from '../state-references.js';
import { STATE_SOURCE_DESCRIPTORS, STATE_SOURCE_TYPES, sourceTypesWhere } from './index.js';
import type { StateSourceDescriptor } from './state-source-kind.js';

const ALL = STATE_SOURCE_DESCRIPTORS as readonly StateSourceDescriptor[];
const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';

describe('state source registry', () => {
  it('names each source once, its schema fixing the same type', () => {
    expect(new Set(STATE_SOURCE_TYPES).size).toBe(ALL.length);
    for (const d of ALL) expect(d.settings.properties.type, d.type).toMatchObject({ const: d.type });
  });

  it('gives the console a field for every setting and none for a setting that does not exist', () => {
    for (const d of ALL) {
      const settings = Object.keys(d.settings.properties).filter((k) => k !== 'type');
      expect(d.form.map((f) => f.key).sort(), d.type).toEqual(settings.sort());
    }
  });

  it('reads and references only through settings the schema has', () => {
    for (const d of ALL) {
      if (d.reads) expect(d.settings.properties, d.type).toHaveProperty(d.reads);
      if (d.device) expect(d.settings.properties, d.type).toHaveProperty('deviceId');
      if (d.device === 'connector') expect(d.settings.properties, d.type).toHaveProperty('connectorId');
    }
  });

  it('derives the lists the states domain and the rules used to write by hand', () => {
    // Registry order is the order of the API's "must be one of" and of the console's choice.
    expect(STATE_SOURCE_TYPES.slice(0, 3)).toEqual(['connector', 'dynamic-routing', 'aggregate']);
    expect([...AGGREGATING_SOURCE_TYPES].sort()).toEqual([
      'aggregate',
      'time-aggregated',
      'timeseries-aggregate',
    ]);
    expect(sourceTypesWhere((d) => d.settable)).toEqual(['boolean']);
    expect(sourceTypesWhere((d) => d.recomputable === true)).toEqual(['aggregate', 'time-aggregated']);
    expect(sourceTypesWhere((d) => d.device === 'connector')).toEqual(['connector']);
  });

  it('finds the states a source reads from its descriptor', () => {
    expect(sourceStateIds({ type: 'aggregate', operation: 'sum', stateIds: [A, B] })).toEqual([A, B]);
    expect(sourceStateIds({ type: 'time-aggregated', stateId: A, operation: 'sum', period: 'day' })).toEqual([
      A,
    ]);
    expect(
      sourceStateIds({
        type: 'timeseries-aggregate',
        stateId: B,
        operation: 'max',
        windowSeconds: 60,
        intervalSeconds: 10,
      }),
    ).toEqual([B]);
    expect(sourceStateIds({ type: 'random', min: 0, max: 1, intervalSeconds: 5 })).toEqual([]);
    expect(sourceStateIds(null)).toEqual([]);
  });
});
