import { describe, expect, it } from 'vitest';
import {
  conditionDetail,
  conditionHolds,
  conditionProblem,
  conditionsHold,
  type Condition,
} from './conditions.js';
import { areaProblem, contains, positionOf, type GeoArea } from './geofence.js';
import { renderText, renderValue, type PlaceholderContext } from './placeholders.js';
import type { AggregateSource } from '../states/state-source.js';
import { aggregateValue } from './rule-runner.js';
import { changeSteps } from './rule-engine.js';
import type { StateChange } from '../states/engine/state-work.js';

const square: GeoArea = {
  type: 'Polygon',
  coordinates: [
    [
      [13, 52],
      [14, 52],
      [14, 53],
      [13, 53],
      [13, 52],
    ],
  ],
};

describe('conditions', () => {
  it('applies operators per value type without coercion', () => {
    expect(conditionHolds({ stateKey: 't', operator: '>', value: 20 }, 21)).toBe(true);
    expect(conditionHolds({ stateKey: 't', operator: '>', value: 20 }, '21')).toBe(false);
    expect(conditionHolds({ stateKey: 't', operator: 'between', value: [1, 2] }, 2)).toBe(true);
    expect(conditionHolds({ stateKey: 'b', operator: 'isTrue' }, true)).toBe(true);
    expect(conditionHolds({ stateKey: 's', operator: 'matches', value: '^ab' }, 'abc')).toBe(true);
    expect(conditionHolds({ stateKey: 'o', operator: 'hasKey', value: 'x' }, { x: 1 })).toBe(true);
    expect(conditionHolds({ stateKey: 'm', operator: 'missing' }, undefined)).toBe(true);
    expect(conditionHolds({ stateKey: 'm', operator: '!=', value: 1 }, undefined)).toBe(false);
    expect(
      conditionsHold(
        [
          { stateKey: 'a', operator: '>', value: 1 },
          { stateKey: 'b', operator: 'exists' },
        ],
        { a: 2 },
        'any',
      ),
    ).toBe(true);
    expect(
      conditionsHold(
        [
          { stateKey: 'a', operator: '>', value: 1 },
          { stateKey: 'b', operator: 'exists' },
        ],
        { a: 2 },
      ),
    ).toBe(false);
  });

  it('refuses operators that do not fit the state type and bad values', () => {
    expect(conditionProblem({ stateKey: 'b', operator: '>', value: 1 }, 'boolean')).toMatch(/does not apply/);
    expect(conditionProblem({ stateKey: 'n', operator: '>', value: '1' }, 'number')).toMatch(/number/);
    expect(conditionProblem({ stateKey: 'n', operator: 'between', value: [3, 1] })).toMatch(/min <= max/);
    expect(conditionProblem({ stateKey: 's', operator: 'matches', value: '(' })).toMatch(
      /regular expression/,
    );
    expect(conditionProblem({ stateKey: 'n', operator: '<=', value: 5 }, 'integer')).toBeUndefined();
  });

  it('name the operator or value at fault with the keyword a schema would use', () => {
    const at = '/trigger/conditions/2';
    const of = (c: Condition, valueType?: string) => {
      const found = conditionDetail(at, c, valueType);
      return found && { path: found.path, keyword: found.keyword, params: found.params };
    };
    expect(of({ stateKey: 'b', operator: '>', value: 1 }, 'boolean')).toEqual({
      path: `${at}/operator`,
      keyword: 'enum',
      params: { allowedValues: ['==', '!=', 'isTrue', 'isFalse', 'exists', 'missing'] },
    });
    expect(of({ stateKey: 'n', operator: '>', value: '1' })).toEqual({
      path: `${at}/value`,
      keyword: 'type',
      params: { type: 'number' },
    });
    // An emptied bound of a range (sent as null) is missing, the other bound names its limit.
    expect(of({ stateKey: 'n', operator: 'between', value: [-5, null] })).toEqual({
      path: `${at}/value/1`,
      keyword: 'required',
      params: { missingProperty: '1' },
    });
    expect(of({ stateKey: 'n', operator: 'between', value: [3, 1] })).toEqual({
      path: `${at}/value/0`,
      keyword: 'maximum',
      params: { comparison: '<=', limit: 1 },
    });
    expect(of({ stateKey: 'n', operator: 'between', value: [1] })?.keyword).toBe('minItems');
    expect(of({ stateKey: 's', operator: 'matches', value: '(' })?.params).toEqual({ format: 'regex' });
    expect(of({ stateKey: 's', operator: 'matches', value: 'x'.repeat(201) })?.keyword).toBe('maxLength');
    expect(of({ stateKey: 's', operator: 'exists', value: 1 })).toEqual({
      path: `${at}/value`,
      keyword: undefined,
      params: undefined,
    });
    expect(conditionDetail(at, { stateKey: 'n', operator: '>', value: '1' })?.message).toBe(
      'value must be a number',
    );
  });
});

describe('geofence', () => {
  it('tests polygons (with holes) and circles', () => {
    expect(contains(square, { lon: 13.5, lat: 52.5 })).toBe(true);
    expect(contains(square, { lon: 12.5, lat: 52.5 })).toBe(false);
    const holed: GeoArea = {
      type: 'Polygon',
      coordinates: [
        square.coordinates[0]!,
        [
          [13.4, 52.4],
          [13.6, 52.4],
          [13.6, 52.6],
          [13.4, 52.6],
          [13.4, 52.4],
        ],
      ],
    };
    expect(contains(holed, { lon: 13.5, lat: 52.5 })).toBe(false);
    const circle: GeoArea = {
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [13.4, 52.52] },
      properties: { radius: 1000 },
    };
    expect(contains(circle, { lon: 13.405, lat: 52.52 })).toBe(true); // ≈ 340 m east
    expect(contains(circle, { lon: 13.42, lat: 52.52 })).toBe(false); // ≈ 1.36 km east
  });

  it('reads positions and refuses broken areas', () => {
    expect(positionOf({ lat: 52, lon: 13 })).toEqual({ lon: 13, lat: 52 });
    expect(positionOf({ latitude: '52', longitude: '13' })).toEqual({ lon: 13, lat: 52 });
    expect(positionOf({ type: 'Point', coordinates: [13, 52] })).toEqual({ lon: 13, lat: 52 });
    expect(positionOf([13, 52])).toEqual({ lon: 13, lat: 52 });
    expect(positionOf({ lat: 200, lon: 13 })).toBeNull();
    expect(areaProblem(square)).toBeUndefined();
    expect(
      areaProblem({
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 1],
          ],
        ],
      }),
    ).toMatch(/rings/);
    expect(
      areaProblem({ type: 'Feature', geometry: { type: 'Point', coordinates: [1, 1] }, properties: {} }),
    ).toMatch(/radius/);
    expect(areaProblem({ type: 'LineString' })).toBeDefined();
  });
});

describe('placeholders', () => {
  const ctx: PlaceholderContext = {
    twin: {
      id: 't1',
      title: 'Pump 1',
      hierarchy: ['Site', 'Hall', 'Pump 1'],
      properties: { room: '12' },
      states: { temp: 21.5, on: true, o: { a: 1 } },
    },
    rule: { id: 'r1', title: 'Hot' },
    trigger: 'event',
    time: new Date('2026-01-01T00:00:00Z'),
    publicUrl: 'https://stellwerk.example/',
  };

  it('renders every placeholder of the grammar, unknown ones as empty text', () => {
    expect(
      renderText(
        '{{twin.title}}|{{ twin.id }}|{{twin.hierarchy}}|{{states.temp}}|{{states.on}}|{{states.o}}|{{twin.properties.room}}|{{twinlink}}|{{states.none}}|{{rule.title}}|{{trigger}}|{{time}}',
        ctx,
      ),
    ).toBe(
      'Pump 1|t1|Site / Hall / Pump 1|21.5|true|{"a":1}|12|https://stellwerk.example/#/twins/t1||Hot|event|2026-01-01T00:00:00.000Z',
    );
    expect(renderText('{{ not closed', ctx)).toBe('{{ not closed');
    expect(renderValue({ a: ['{{twin.id}}', 3] }, ctx)).toEqual({ a: ['t1', 3] });
    expect(renderText('{{twin.title}}', { ...ctx, twin: null })).toBe('');
  });
});

describe('aggregate trigger', () => {
  it('recomputes an aggregate from its sources’ current values, a difference from its recent values', () => {
    const values = new Map<string, unknown>([
      ['a', 4],
      ['b', 6],
      ['c', null],
    ]);
    const sum: AggregateSource = { type: 'aggregate', operation: 'sum', stateIds: ['a', 'b', 'c', 'gone'] };
    expect(aggregateValue(sum, values, undefined)).toBe(10);
    expect(aggregateValue({ ...sum, operation: 'count' }, values, undefined)).toBe(2);
    expect(aggregateValue({ ...sum, operation: 'max', stateIds: ['c'] }, values, undefined)).toBeNull();
    const difference: AggregateSource = { type: 'aggregate', operation: 'difference', stateIds: ['a'] };
    expect(aggregateValue(difference, values, [3, 7.5])).toBe(4.5);
    expect(aggregateValue(difference, values, [7.5])).toBeNull();
    expect(aggregateValue(difference, values, null)).toBeNull();
    expect(aggregateValue(difference, values, ['x', 1, 2, 5])).toBe(3);
  });
});

describe('change steps', () => {
  const change = (key: string, value: number): StateChange => ({
    stateId: key,
    twinId: 't',
    accountId: 'a',
    key,
    value,
    timestamp: new Date(0),
    warning: null,
  });

  it('keeps the keys of one update together and starts a step where a key comes again', () => {
    const steps = changeSteps([
      change('a', 1),
      change('b', 1),
      change('sum', 2),
      change('a', 5),
      change('a', 7),
    ]);
    expect(steps.map((step) => step.map((c) => `${c.key}=${String(c.value)}`))).toEqual([
      ['a=1', 'b=1', 'sum=2'],
      ['a=5'],
      ['a=7'],
    ]);
    expect(changeSteps([])).toEqual([]);
  });
});
