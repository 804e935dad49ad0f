import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TSchema } from 'typebox';
import { describe, expect, it } from 'vitest';
import { RoutingIndex, type StateDefinition } from '../engine/routing-index.js';
import { STATE_SOURCE_DESCRIPTORS, STATE_SOURCE_TYPES, type StateSource } from './index.js';
import type { SourceComputations, SourceCompute, StateSourceDescriptor } from './state-source-kind.js';

const ALL = STATE_SOURCE_DESCRIPTORS as readonly StateSourceDescriptor[];
const SERVER = join(import.meta.dirname, '..', '..');

/** The settings each computation reads (the runtime side of `SourceComputations`). */
const COMPUTATION_SETTINGS: { [K in SourceCompute]: ReadonlyArray<keyof SourceComputations[K]> } = {
  states: ['stateIds', 'operation'],
  period: ['stateId', 'operation', 'period'],
  window: ['stateId', 'operation', 'windowSeconds', 'intervalSeconds'],
  draw: ['min', 'max', 'intervalSeconds'],
};
/** Computations over other states, and the setting naming them. */
const COMPUTATION_READS: { [K in SourceCompute]: StateSourceDescriptor['reads'] } = {
  states: 'stateIds',
  period: 'stateId',
  window: 'stateId',
  draw: undefined,
};
/** What the rules' recompute can do: take the states' values now, or roll a period over. */
const RECOMPUTABLE: readonly SourceCompute[] = ['states', 'period'];

const UUID = '11111111-1111-4111-8111-111111111111';

/** A value the schema accepts, from its first choice, minimum or format (no defaults declared). */
function sample(schema: TSchema): unknown {
  const s = schema as Record<string, unknown> & { properties?: Record<string, TSchema> };
  if ('const' in s) return s.const;
  if (s.anyOf) return sample((s.anyOf as TSchema[])[0]!);
  if (s.properties) {
    return Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, sample(v)]));
  }
  switch (s.type) {
    case 'string':
      return s.format === 'uuid' ? UUID : 'key';
    case 'number':
    case 'integer':
      return s.minimum ?? 1;
    case 'array':
      return [sample(s.items as TSchema)];
    default:
      return false;
  }
}

/** The engine and the code that used to decide by a source's type. */
function engineFiles(): string[] {
  const engine = join(SERVER, 'states', 'engine');
  return [
    ...readdirSync(engine)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .map((f) => join(engine, f)),
    join(SERVER, 'rules', 'rule-runner.ts'),
    join(SERVER, 'states', 'data-state.service.ts'),
  ];
}

// `boolean` is also a value type: state-values.ts checks values against it, never sources.
const VALUE_TYPE_FILES = new Set(['state-values.ts']);

describe('state source properties', () => {
  it('leaves the engine, the rule runner and the states service without a source type name', () => {
    const files = engineFiles();
    expect(files.length).toBeGreaterThan(8);
    for (const file of files) {
      // JavaScript's own `typeof x === 'boolean'` names a runtime type, not a source.
      const text = readFileSync(file, 'utf8').replace(/typeof [\w.]+ === '\w+'/g, '');
      const name = file.slice(file.lastIndexOf('/') + 1);
      for (const type of STATE_SOURCE_TYPES) {
        if (type === 'boolean' && VALUE_TYPE_FILES.has(name)) continue;
        // Quoted, not in backticks: comments may still say which sources a computation serves.
        const literal = new RegExp(`(['"])${type.replace(/-/g, '\\-')}\\1`);
        expect(literal.test(text), `${name} names the source type '${type}'`).toBe(false);
      }
    }
  });

  it('gives a source at most one of routing and computation, and users set neither kind', () => {
    for (const d of ALL) {
      const feeds = [d.routing, d.compute].filter((p) => p !== undefined);
      expect(feeds.length, d.type).toBeLessThanOrEqual(1);
      if (d.settable) expect(feeds, d.type).toEqual([]);
      // Nothing would ever give it a value: it must start with one.
      if (!d.settable && feeds.length === 0) expect(typeof d.initial, d.type).toBe('function');
    }
  });

  it('routes only through settings the schema has, by device exactly when a device is checked', () => {
    for (const d of ALL) {
      expect(d.routing === 'device', d.type).toBe(d.device !== undefined);
      if (d.routing) expect(d.settings.properties, d.type).toHaveProperty('stateKey');
      if (d.routing === 'device') expect(d.settings.properties, d.type).toHaveProperty('deviceId');
      if (d.routing) expect(d.reads, d.type).toBeUndefined();
    }
  });

  it('computes only with the settings and dependencies its computation needs', () => {
    for (const d of ALL) {
      if (!d.compute) continue;
      for (const key of COMPUTATION_SETTINGS[d.compute]) {
        expect(d.settings.properties, `${d.type}: ${String(key)}`).toHaveProperty(key);
      }
      expect(d.reads, d.type).toBe(COMPUTATION_READS[d.compute]);
      expect(d.recomputable === true, d.type).toBe(RECOMPUTABLE.includes(d.compute));
    }
  });

  it('indexes a state of every source by its descriptor: routes, computation, timers', () => {
    const defs: StateDefinition[] = ALL.map((d, i) => ({
      id: `s-${i}`,
      twinId: 'twin-1',
      accountId: 'acc-1',
      key: d.type,
      valueType: 'number',
      source: sample(d.settings) as StateSource,
      timeZone: 'UTC',
      referenceId: 'ref-1',
    }));
    const index = new RoutingIndex(defs);
    ALL.forEach((d, i) => expect(index.byId.get(`s-${i}`)?.compute, d.type).toBe(d.compute));
    expect(index.routedCount).toBe(ALL.filter((d) => d.routing).length);
    const computations = Object.keys(COMPUTATION_SETTINGS) as SourceCompute[];
    for (const compute of computations) {
      expect(index.computedBy(compute).map((def) => def.key)).toEqual(
        ALL.filter((d) => d.compute === compute).map((d) => d.type),
      );
    }
  });
});
