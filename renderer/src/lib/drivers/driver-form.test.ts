import { describe, expect, it } from 'vitest';
import { en } from '../../i18n/en';
import { bulkEditCalls, splitLabels } from './bulk-edit';
import {
  bodyOf,
  draftOf,
  emptyField,
  emptyRule,
  nextOffset,
  operatorsFor,
  driverProblems,
  samplePayload,
  stateKind,
  valueInput,
  type Driver,
} from './driver-form';

const stored: Driver = {
  id: 'd1',
  accountId: 'a1',
  title: 'Meter',
  description: '',
  shared: false,
  parser: {
    type: 'binary',
    fields: [{ key: 't', offset: 0, type: 'int16', endian: 'little', scale: 0.1 }],
  } as Driver['parser'],
  targetVariables: [
    { key: 't', type: 'number', unit: '°C' },
    { key: 'open', type: 'boolean' },
  ],
  healthConfig: {
    rules: [
      { state: 't', operator: 'between', value: [-5, 40], result: 'OK' },
      { state: 'open', operator: '==', value: true, result: 'Open' },
      { state: '_raw', operator: 'missing', result: 'Silent' },
    ],
    silentAfterSeconds: 600,
  },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

describe('driver form', () => {
  it('round-trips a stored driver through the draft unchanged', () => {
    const body = bodyOf(draftOf(stored));
    expect(body.parser).toEqual(stored.parser);
    expect(body.targetVariables).toEqual(stored.targetVariables);
    expect(body.healthConfig).toEqual(stored.healthConfig);
  });

  it('types rule values by operator and state, and keeps unreadable numbers as text for the server to name', () => {
    const draft = draftOf(stored);
    draft.rules = [{ ...emptyRule('t'), operator: '<', value: 'low', result: 'Cold' }];
    expect(bodyOf(draft).healthConfig!.rules[0]).toEqual({
      state: 't',
      operator: '<',
      value: 'low',
      result: 'Cold',
    });
    expect(valueInput('==', 'boolean')).toBe('boolean');
    expect(valueInput('==', 'raw')).toBe('text');
    expect(valueInput('exists', 'number')).toBe('none');
    expect(operatorsFor('object')).toEqual(['hasKey', 'exists', 'missing']);
    expect(operatorsFor('raw')).toContain('between');
  });

  it('maps error details to form paths, health paths relative to the configuration', () => {
    const problems = driverProblems(
      [
        { index: 0, path: '/rules/0/value', message: 'rule 0: value must be a number' },
        { path: '/parser/fields/1/offset', message: 'offset must be an integer' },
        { location: 'body', path: '/healthConfig/rules/2/result', message: 'too long' },
        { path: '/targetVariables/0/key' },
        { parseError: 'PARSE_ERROR' },
      ],
      'Duplicate target variable key "t"',
      en.schemaProblems,
    );
    expect([...problems]).toEqual([
      ['/rules/0/value', 'rule 0: value must be a number'],
      ['/parser/fields/1/offset', 'offset must be an integer'],
      ['/rules/2/result', 'too long'],
      ['/targetVariables/0/key', 'Duplicate target variable key "t"'],
    ]);
  });

  it('sends samples as hex or base64 (text as its UTF-8 bytes)', () => {
    expect(samplePayload('0x00, 0xD7\n5a', 'hex')).toEqual({ hex: '00 D7 5a' });
    expect(samplePayload('AN cB', 'base64')).toEqual({ base64: 'ANcB' });
    expect(samplePayload('{"t":"ü"}', 'text')).toEqual({
      base64: Buffer.from('{"t":"ü"}').toString('base64'),
    });
  });

  it('offers number operators on _meta.rssi without a target variable of that name', () => {
    expect(operatorsFor(stateKind('_meta.rssi', []))).toContain('<');
    expect(operatorsFor(stateKind('_meta.gateway', []))).toContain('matches');
    expect(stateKind('_meta.unknown', [])).toBeUndefined();
  });

  it('places a new field after the one that ends last', () => {
    const a = { ...emptyField(0), type: 'uint32' as const };
    const b = { ...emptyField(6), type: 'uint16' as const };
    expect(nextOffset([a])).toBe(4);
    expect(nextOffset([b, a])).toBe(8);
    expect(nextOffset([])).toBe(0);
  });
});

describe('bulk edit', () => {
  it('adds tags to each device’s own: devices ending with the same tags share one call', () => {
    const calls = bulkEditCalls(
      [
        { id: '1', tags: ['a'], groups: [] },
        { id: '2', tags: ['a'], groups: [] },
        { id: '3', tags: ['b', 'x'], groups: ['g'] },
      ],
      splitLabels('x, y; x'),
      [],
      { operationalStatus: 2 },
    );
    expect(calls).toEqual([
      { ids: ['1', '2'], set: { operationalStatus: 2, tags: ['a', 'x', 'y'] } },
      { ids: ['3'], set: { operationalStatus: 2, tags: ['b', 'x', 'y'] } },
    ]);
  });

  it('makes one call for a change without labels, none without devices', () => {
    expect(bulkEditCalls([{ id: '1', tags: [], groups: [] }], [], [], { deviceTemplateId: null })).toEqual([
      { ids: ['1'], set: { deviceTemplateId: null } },
    ]);
    expect(bulkEditCalls([], [], [], {})).toEqual([]);
  });
});
